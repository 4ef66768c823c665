"""Rules for services and sessions: systemd, the journal, kubectl, tmux and screen.

Each reads its global options with its own grammar first, so an option's value is never taken
for the verb (`systemctl --reboot-argument status reboot` reboots; `kubectl --cache-dir get
delete …` deletes).
"""

from __future__ import annotations

import re

from agent.safety.shell.endpoints import endpoint_problem
from agent.safety.shell.options import Parsed, grammar, read_args
from agent.safety.shell.outcomes import (
    Outcome,
    ProgramRule,
    RunsCommand,
    RunsScript,
    destructive,
    judge_options,
    mutating,
    not_understood,
    option_effects,
    read_only,
    understood,
)
from agent.safety.shell.shell_words import RuntimeText

SYSTEMCTL = grammar(
    "-t|--type= --state= -p|--property= -P= -a|--all -r|--recursive --reverse --after --before "
    "--with-dependencies -l|--full --value --show-types --job-mode= -T|--show-transaction "
    "--fail --failed -i|--ignore-inhibitors --dry-run -q|--quiet --no-warn --wait --no-block "
    "--user "
    "--system --global --no-pager --no-legend --no-ask-password -H|--host= -M|--machine= "
    "-n|--lines= -o|--output= --firmware-setup:m --boot-loader-menu=:m --boot-loader-entry=:m "
    "--reboot-argument=:m --kill-whom= --kill-value= -s|--signal= --what= --now -f|--force "
    "--runtime --root= --image= --image-policy= --preset-mode= --plain --legend= --timestamp= "
    "--mkdir --marked --read-only --check-inhibitors= --drop-in= --when= -h|--help --version "
    "--no-reload -1|--capsule="
)
SYSTEMCTL_READ = frozenset(
    {"status", "is-active", "is-enabled", "is-failed", "is-system-running", "list-units",
     "list-unit-files", "list-timers", "list-sockets", "list-dependencies", "list-jobs",
     "list-machines", "list-automounts", "list-paths", "show", "cat", "get-default", "help",
     "show-environment"}
)  # fmt: skip
SYSTEMCTL_DESTRUCTIVE = frozenset(
    {"stop", "disable", "mask", "kill", "poweroff", "reboot", "halt", "isolate", "kexec",
     "emergency", "rescue", "suspend", "hibernate", "soft-reboot", "hybrid-sleep",
     "suspend-then-hibernate", "clean", "freeze", "default", "exit"}
)  # fmt: skip
# A restart stops the unit first: `restart docker` stops every container on the host.
SYSTEMCTL_RESTARTS = frozenset(
    {"restart", "try-restart", "reload-or-restart", "try-reload-or-restart", "condrestart",
     "force-reload", "force-restart"}
)  # fmt: skip
SERVICE_READ = frozenset({"status", "--status-all", "--help", "--version", "-h"})
JOURNALCTL = grammar(
    "--system --user -M|--machine= -m|--merge -D|--directory= -i|--file= --root= --image= "
    "--image-policy= --namespace= -S|--since= -U|--until= -c|--cursor= --after-cursor= "
    "--cursor-file=:w -b|--boot[=] -u|--unit= --user-unit= -t|--identifier= "
    "-T|--exclude-identifier= -p|--priority= --facility= -g|--grep= --case-sensitive[=] "
    "-k|--dmesg -o|--output= --output-fields= -n|--lines[=] -r|--reverse --show-cursor "
    "--utc -x|--catalog --no-hostname --no-full -a|--all -f|--follow --no-tail -q|--quiet "
    "--no-pager -e|--pager-end -N|--fields -F|--field= --list-boots --list-namespaces "
    "--list-invocations -I --invocation= --disk-usage --verify --verify-key= --header "
    "--interval= --force --new-id128 --sync:m --flush:m --relinquish-var:m "
    "--smart-relinquish-var:m --rotate:m --vacuum-size=:d --vacuum-time=:d --vacuum-files=:d "
    "--setup-keys:m --update-catalog:m --list-catalog --dump-catalog -h|--help --version"
)
BOOT_ID = re.compile(r"[+-]?\d+|[0-9a-f]{32}([+-]\d+)?|all")
KUBECTL = grammar(
    "--kubeconfig= --context= --cluster= --user= -n|--namespace= -s|--server= --token= --as= "
    "--as-group= --as-uid= --certificate-authority= --client-certificate= --client-key= "
    "--insecure-skip-tls-verify --tls-server-name= --request-timeout= --cache-dir= "
    "--log-flush-frequency= -v|--v= --vmodule= --match-server-version --password= --username= "
    "--profile= --profile-output=:w --warnings-as-errors --disable-compression --log-dir=:w "
    "--log-file=:w --alsologtostderr --logtostderr --one-output --skip-headers "
    "--skip-log-headers --stderrthreshold= --add-dir-header -o|--output= -l|--selector= "
    "-A|--all-namespaces -w|--watch --watch-only --field-selector= --show-labels --sort-by= "
    "-L|--label-columns= --no-headers --show-kind --chunk-size= --raw= --server-print "
    "--subresource= -f|--filename= -k|--kustomize= -R|--recursive --ignore-not-found "
    "--output-watch-events --template= --allow-missing-template-keys --show-managed-fields "
    "-c|--container= -p|--previous --since= --since-time= --tail= --timestamps "
    "--all-containers --prefix --max-log-requests= --limit-bytes= --pod-running-timeout= "
    "--ignore-errors --insecure-skip-tls-verify-backend --show-events --containers "
    "--use-protocol-buffers --sum --minify --flatten --api-group= --namespaced --verbs= "
    "--recursive --api-version= -i|--stdin -t|--tty -q|--quiet -h|--help --client --short"
)
KUBECTL_READ = frozenset(
    {"get", "describe", "logs", "top", "explain", "version", "api-resources", "api-versions",
     "cluster-info", "events", "diff", "wait"}
)  # fmt: skip
# `--raw` paths that proxy to services (a GET there can act) or run something.
RAW_ACTIONS = ("/proxy", "/exec", "/attach", "/portforward", "/run/", "/debug")
TMUX = grammar("-2 -C:x -D -l -N -u -U -v -V -c=:x -f=:x -L= -S= -T=", stop_at_positional=True)
TMUX_READ = frozenset(
    {"ls", "list-sessions", "list-windows", "lsw", "list-panes", "lsp", "has-session", "has",
     "capture-pane", "capturep", "show-options", "show", "list-clients", "lsc", "display-message",
     "display", "show-environment", "showenv", "list-buffers", "lsb", "list-keys", "lsk",
     "list-commands", "lscm", "show-buffer", "showb", "show-messages", "showmsgs"}
)  # fmt: skip
TMUX_NEW = frozenset({"new-session", "new", "new-window", "neww", "respawn-pane", "respawnp",
                      "split-window", "splitw", "respawn-window", "respawnw"})  # fmt: skip
TMUX_NEW_OPTIONS = grammar(
    "-A -b -d -D -E -f= -h -I -k -l= -P -v -X -Z -s= -n= -c= -t= -x= -y= -e= -F=",
    stop_at_positional=True,
)


def _systemctl(name: str, args: list[str]) -> list[Outcome]:
    parsed, problems = understood(name, args, SYSTEMCTL)
    if problems:
        return problems
    effects = option_effects(name, parsed, {
        "--reboot-argument": "sets what the next reboot does",
        "--firmware-setup": "makes the next boot enter firmware setup"})  # fmt: skip
    if parsed.has("--version", "-h") and not parsed.positionals:
        return effects or read_only("'systemctl --version' prints a version")
    verb = parsed.positionals[0] if parsed.positionals else "list-units"
    if isinstance(verb, RuntimeText):
        return mutating(f"'systemctl {verb}': the verb is only known at run time")
    if verb in SYSTEMCTL_DESTRUCTIVE:
        return destructive(f"'systemctl {verb}' stops services or the host")
    if verb in SYSTEMCTL_RESTARTS:
        return destructive(f"'systemctl {verb}' stops the service before starting it again")
    if verb in SYSTEMCTL_READ:
        return effects or read_only(f"'systemctl {verb}' only reads")
    return mutating(f"'systemctl {verb}' changes services")


def _journalctl(name: str, args: list[str]) -> list[Outcome]:
    why = dict.fromkeys(("--vacuum-size", "--vacuum-time", "--vacuum-files"), "deletes old logs")
    why["--cursor-file"] = "writes the cursor to a file"
    _, found = judge_options(name, _boot_offsets(args), JOURNALCTL, why=why)
    return found or read_only("'journalctl' only reads logs")


def _boot_offsets(args: list[str]) -> list[str]:
    """`journalctl -b -1`: -b takes the next word when it is a boot offset or ID (as it does)."""
    words: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        following = args[index + 1] if index + 1 < len(args) else ""
        if word in ("-b", "--boot") and BOOT_ID.fullmatch(following):
            words.append(f"--boot={following}")
            index += 2
            continue
        words.append(word)
        index += 1
    return words


def _kubectl(name: str, args: list[str]) -> list[Outcome]:
    parsed, problems = understood(name, args, KUBECTL)
    if problems:
        return problems
    effects = option_effects(name, parsed) + _kube_endpoint(parsed)
    words = parsed.positionals
    if not words:
        return mutating("'kubectl' without a subcommand")
    verb = words[0]
    if isinstance(verb, RuntimeText):
        return mutating(f"'kubectl {verb}': the verb is only known at run time")
    raw = parsed.value("--raw") or ""
    if any(part in raw for part in RAW_ACTIONS) or isinstance(raw, RuntimeText):
        return mutating(f"'kubectl get --raw {raw}' reaches a proxy or an action, not a read")
    if verb in KUBECTL_READ:
        return effects or read_only(f"'kubectl {verb}' only reads")
    if (
        verb == "config"
        and words[1:2]
        and words[1] in ("view", "get-contexts", "current-context", "get-clusters")
    ):
        return effects or read_only(f"'kubectl config {words[1]}' only reads")
    if verb == "auth" and words[1:2] == ["can-i"]:
        return effects or read_only("'kubectl auth can-i' only asks")
    if verb in ("delete", "drain"):
        return destructive(f"'kubectl {verb}' removes workloads")
    if verb == "exec":
        command = args[args.index("--") + 1 :] if "--" in args else words[2:]
        if not command:
            return mutating("'kubectl exec' without a command")
        target = words[1] if len(words) > 1 else "?"
        return [RunsCommand(tuple(command), f"kubectl exec {target}")]
    return mutating(f"'kubectl {verb}' changes the cluster")


def _kube_endpoint(parsed: Parsed) -> list[Outcome]:
    """`-s` and `--kubeconfig` choose the API server, which receives the kubeconfig's token."""
    found: list[Outcome] = []
    for server in parsed.values("-s"):
        if problem := endpoint_problem(server, "'kubectl --server' sends requests to"):
            found += mutating(problem)
    if parsed.value("--kubeconfig") not in (None, "~/.kube/config"):
        found += mutating("'kubectl --kubeconfig' uses a kubeconfig whose server was not read")
    return found


def _tmux(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_args(args, TMUX)
    if problems := not_understood(name, parsed, TMUX):
        return problems
    if parsed.has("-f"):
        return mutating("'tmux -f' runs the commands in a config file")
    if parsed.has("-C"):
        return mutating("'tmux -C' reads more tmux commands from its input")
    if parsed.value("-c"):
        return [RunsScript(parsed.value("-c") or "", "tmux -c")]
    if any("#(" in arg for arg in args):
        return mutating("a tmux format with #(…) runs a shell command")
    sequence = tmux_commands(parsed.rest) or [[]]
    return [outcome for command in sequence for outcome in _tmux_command(command)]


def tmux_commands(words: list[str]) -> list[list[str]]:
    """tmux's own command sequence: a word `;` (the shell's `\\;`), or one ending in an
    unescaped `;`, ends a command (`tmux ls \\; kill-server` runs both)."""
    commands: list[list[str]] = [[]]
    for word in words:
        if word == ";":
            commands.append([])
        elif word.endswith(";") and not word.endswith("\\;"):
            commands[-1].append(word[:-1])
            commands.append([])
        else:
            commands[-1].append(word)
    return [command for command in commands if command]


def _tmux_command(rest: list[str]) -> list[Outcome]:
    verb = rest[0] if rest else ""
    if isinstance(verb, RuntimeText):
        return mutating(f"'tmux {verb}': the command is only known at run time")
    if verb in TMUX_READ:
        return read_only(f"'tmux {verb}' only reads")
    if verb.startswith("kill-"):
        return destructive(f"'tmux {verb}' ends sessions and the programs in them")
    if verb in ("send-keys", "send"):
        keys = read_args(rest[1:], grammar("-F -H -K -l -M -R -X -c= -N= -t=",
                                           stop_at_positional=True))  # fmt: skip
        typed = [k for k in keys.rest if k not in ("Enter", "C-m", "KPEnter")]
        return [
            *mutating(f"'tmux {verb}' types into a shell"),
            RunsScript(" ".join(typed), "tmux send-keys"),
        ]
    if verb in TMUX_NEW:
        started = read_args(rest[1:], TMUX_NEW_OPTIONS)
        outcomes = mutating(f"'tmux {verb}' starts a session")
        if started.rest:
            outcomes.append(RunsScript(" ".join(started.rest), f"tmux {verb}"))
        return outcomes
    return mutating(f"'tmux {verb or 'new-session'}' starts or changes sessions")


def _screen(name: str, args: list[str]) -> list[Outcome]:
    if args and args[0] in ("-ls", "-list", "--version", "-v") and len(args) == 1:
        return read_only(f"'screen {args[0]}' only lists sessions")
    return mutating("'screen' starts or drives a session")


def _service(name: str, args: list[str]) -> list[Outcome]:
    """`service UNIT VERB` (or `/etc/init.d/UNIT VERB`): judged by systemctl's verbs."""
    unit, verb = (name, args[0] if args else "") if name != "service" else (
        args[0] if args else "", args[1] if len(args) > 1 else "")  # fmt: skip
    if unit in SERVICE_READ and name == "service":
        return read_only(f"'service {unit}' only reads")
    if verb in SERVICE_READ:
        return read_only(f"'service {unit} {verb}' only reads")
    if verb in SYSTEMCTL_DESTRUCTIVE or verb in SYSTEMCTL_RESTARTS:
        return destructive(f"'service {unit} {verb}' stops the service")
    return mutating(f"'service {unit} {verb}' changes services")


def service_rules() -> dict[str, ProgramRule]:
    return {
        "systemctl": _systemctl, "journalctl": _journalctl, "kubectl": _kubectl, "tmux": _tmux,
        "screen": _screen, "service": _service,
    }  # fmt: skip
