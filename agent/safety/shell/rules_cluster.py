"""Rules for the cluster and datacenter tools of GPU hosts: dcgmi, crictl, helm, ipmitool, fuser,
chronyc and iproute2's bridge.

Each is read-only only for an allow-listed subcommand whose options are all known; an endpoint
option (`dcgmi --host`, `crictl -r`, `helm --kube-apiserver`, `ipmitool -H`) must name a local
socket, loopback or an inventory host. Anything that removes, resets or powers off is
destructive; anything else changes something.
"""

from __future__ import annotations

from agent.safety.shell.abbreviations import iproute2_object, iproute2_verb
from agent.safety.shell.endpoints import endpoint_problem
from agent.safety.shell.options import Grammar, Parsed, grammar, word_set
from agent.safety.shell.outcomes import (
    Outcome,
    ProgramRule,
    destructive,
    judge_options,
    mutating,
    read_only,
)
from agent.safety.shell.shell_words import RuntimeText

# dcgmi SUBCOMMAND: the options that only read (anything else, e.g. `health -s`, changes).
DCGMI_READ: dict[str, Grammar] = {
    sub: grammar(f"{spec} --host= -g|--group= -j|--json -h|--help")
    for sub, spec in {
        "discovery": "-l|--list -i|--info= -c|--compute -v|--verbose -p|--gpuid=",
        "health": "-c|--check -f|--fetch -v|--verbose",
        "dmon": "-e|--field-id= -i|--gpu-id= -d|--delay= -c|--count= -l|--list",
        "group": "-l|--list -i|--info",
        "fieldgroup": "-l|--list -i|--info -f|--fieldgroup=",
        "stats": "-v|--verbose -j|--jobid= -p|--pid=",
        "topo": "--gpuid= -i=",
        "nvlink": "-e|--errors -s|--link-status -i|--gpuid=",
        "config": "--get -v|--verbose",
        "policy": "--get -v|--verbose",
        "profile": "-l|--list -i|--gpuid=",
        "modules": "-l|--list",
    }.items()
}
CRICTL = grammar(
    "-c|--config=:x -D|--debug -r|--runtime-endpoint= -i|--image-endpoint= -t|--timeout= "
    "--enable-tracing --tracing-endpoint= --tracing-sampling-rate-per-million= -h|--help "
    "-v|--version -a|--all -q|--quiet -o|--output= --name= --namespace= --label= --state= "
    "-s= --pod= --image= --no-trunc -l|--latest -n|--last= --digests --id= --sort= "
    "-f|--follow --tail= --since= -p|--previous --timestamps --template= -w|--watch "
    "--seconds= --verbose --get= --list"
)
CRICTL_READ = frozenset({"ps", "pods", "images", "img", "inspect", "inspectp", "inspecti",
                         "imagefsinfo", "info", "version", "logs", "stats", "statsp",
                         "metricdescs", "metricsp", "config"})  # fmt: skip
CRICTL_DESTRUCTIVE = frozenset({"rm", "rmp", "rmi", "stop", "stopp"})
HELM = grammar(
    "--kubeconfig= --kube-context= --kube-apiserver= --kube-token= --kube-as-user= "
    "--kube-as-group= --kube-ca-file= --kube-insecure-skip-tls-verify --kube-tls-server-name= "
    "-n|--namespace= --debug --burst-limit= --qps= --registry-config= --repository-cache= "
    "--repository-config= -A|--all-namespaces -a|--all -o|--output= -q|--short --filter= "
    "-m|--max= --offset= -d|--date -r|--reverse --deployed --failed --pending --superseded "
    "--uninstalled --uninstalling --no-headers --time-format= --revision= --show-desc "
    "--show-resources --template= --version= --devel --regexp --max-col-width= "
    "--fail-on-no-result -h|--help --client"
)
HELM_READ = word_set(
    "list ls status history hist get show inspect search version env repo dependency dep plugin"
)
HELM_SUB_READ = {"repo": {"list", "ls"}, "dependency": {"list", "ls"}, "dep": {"list", "ls"},
                 "plugin": {"list", "ls"}}  # fmt: skip
HELM_DESTRUCTIVE = frozenset({"uninstall", "delete", "del", "un", "rollback"})
IPMITOOL = grammar(
    "-I= -H= -U= -P= -E -f= -L= -p= -c -v -V -h -N= -R= -y= -k= -K -C= -A= -o= -O= -e= -b= "
    "-t= -B= -T= -m= -l= -S= -d= -Z= -z="
)
IPMITOOL_READ = {
    "sensor": {"", "list", "get", "reading"}, "sdr": {"", "list", "elist", "type", "get", "info",
                                                      "entity"},
    "fru": {"", "print", "list"}, "chassis": {"status"}, "mc": {"info", "guid", "selftest"},
    "lan": {"print"}, "sel": {"", "list", "elist", "info", "get", "time"},
    "user": {"list", "summary"}, "channel": {"info", "getaccess"}, "dcmi": {"discover", "power"},
    "power": {"status"}, "sol": {"info"}, "session": {"info"},
}  # fmt: skip
IPMITOOL_DESTRUCTIVE = {("chassis", "power"), ("mc", "reset"), ("bmc", "reset"), ("sel", "clear"),
                        ("power", "off"), ("power", "cycle"), ("power", "reset")}  # fmt: skip
FUSER = grammar(
    "-a|--all -m|--mount -M|--ismountpoint -n|--namespace= -s|--silent -u|--user "
    "-v|--verbose -w|--writeonly -4|--ipv4 -6|--ipv6 -V|--version -l|--list-signals "
    "-k|--kill:d -i|--interactive"
)


CHRONYC = grammar("-n -c -d -m -4 -6 -a -h= -p= -f= -v -e -N")
CHRONYC_READ = word_set(
    "tracking sources sourcestats activity ntpdata serverstats selectdata authdata rtcdata "
    "waitsync smoothing"
)
BRIDGE = grammar("-s|-stats|-statistics -d|-details -j|-json -p|-pretty -c|-color[=] -n|-netns= "
                 "-o|-oneline -t|-timestamp -V|-Version -4 -6 -a|-all")  # fmt: skip


def _dcgmi(name: str, args: list[str]) -> list[Outcome]:
    if args in (["--version"], ["-v"], ["--help"], ["-h"]):
        return read_only(f"'dcgmi {args[0]}' only prints")
    sub = args[0] if args else ""
    if sub == "diag":
        return mutating("'dcgmi diag' runs diagnostics that load the GPUs")
    if sub not in DCGMI_READ:
        return mutating(f"'dcgmi {sub}' is not a subcommand known to only read")
    parsed, found = judge_options(f"dcgmi {sub}", args[1:], DCGMI_READ[sub])
    return found or _endpoints(parsed, "--host") or read_only(f"'dcgmi {sub}' only reads")


def _crictl(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, CRICTL)
    if found:
        return found
    found = _endpoints(parsed, "-r", "-i", "--tracing-endpoint")
    verb = parsed.positionals[0] if parsed.positionals else ""
    if isinstance(verb, RuntimeText):
        return mutating("'crictl': the command is only known at run time")
    if verb in CRICTL_DESTRUCTIVE:
        return destructive(f"'crictl {verb}' stops or removes containers, pods or images")
    if not verb and parsed.has("-v", "-h"):
        return read_only("'crictl --version' only prints")
    if verb in CRICTL_READ and not (verb == "config" and parsed.value("--get") is None
                                    and not parsed.has("--list")):  # fmt: skip
        return found or read_only(f"'crictl {verb}' only reads")
    return found + mutating(f"'crictl {verb or '(no command)'}' changes containers or pods")


def _helm(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, HELM)
    if found:
        return found
    found = _endpoints(parsed, "--kube-apiserver")
    if parsed.value("--kubeconfig") not in (None, "~/.kube/config"):
        found += mutating("'helm --kubeconfig' uses a kubeconfig whose server was not read")
    words = parsed.positionals
    verb = words[0] if words else ""
    if isinstance(verb, RuntimeText):
        return mutating("'helm': the command is only known at run time")
    if verb in HELM_DESTRUCTIVE:
        return destructive(f"'helm {verb}' removes or replaces a release's workloads")
    sub = words[1] if len(words) > 1 else ""
    if verb in HELM_READ and (verb not in HELM_SUB_READ or sub in HELM_SUB_READ[verb]):
        return found or read_only(f"'helm {verb}' only reads")
    return found + mutating(f"'helm {' '.join(words[:2]) or '(no command)'}' changes releases")


def _ipmitool(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, IPMITOOL)
    if found:
        return found
    found = _endpoints(parsed, "-H")
    words = parsed.positionals
    obj = words[0] if words else ""
    action = words[1] if len(words) > 1 else ""
    if (obj, action) in IPMITOOL_DESTRUCTIVE and words[2:3] != ["status"]:
        return destructive(
            f"'ipmitool {obj} {action}' resets, powers off or clears the BMC's state"
        )
    dcmi_read = obj != "dcmi" or words[2:3] == ["reading"] or action == "discover"
    if action in IPMITOOL_READ.get(obj, ()) and dcmi_read:
        return found or read_only(f"'ipmitool {' '.join(words[:2])}' only reads")
    if obj == "chassis" and action == "power" and words[2:3] == ["status"]:
        return found or read_only("'ipmitool chassis power status' only reads")
    return found + mutating(f"'ipmitool {' '.join(words[:2]) or ''}' changes the BMC or host")


def _fuser(name: str, args: list[str]) -> list[Outcome]:
    if any(a.startswith("-") and a[1:].isupper() for a in args):  # `-HUP` picks a signal for -k
        return destructive("'fuser -SIGNAL' sends a signal to the processes it finds")
    _, found = judge_options(name, args, FUSER, why={"-k": "kills the processes it finds"})
    return found or read_only("'fuser' only lists the processes using a file")


def _chronyc(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, CHRONYC)
    if found:
        return found
    found = _endpoints(parsed, "-h")
    verb = parsed.positionals[0] if parsed.positionals else ""
    if verb in CHRONYC_READ and len(parsed.positionals) <= 2:
        return found or read_only(f"'chronyc {verb}' only reads")
    return found + mutating(f"'chronyc {verb or '(interactive)'}' changes time keeping")


def _bridge(name: str, args: list[str]) -> list[Outcome]:
    """iproute2's `bridge OBJECT [ACTION]`: like `ip`, both words expanded by bridge's own
    tables (`bridge m` is `mdb`), and only its show/list/get actions read."""
    parsed, found = judge_options(name, args, BRIDGE)
    if found:
        return found
    words = parsed.positionals
    if any(isinstance(word, RuntimeText) for word in words[:2]):
        return mutating("'bridge' object or action only known at run time")
    obj = iproute2_object("bridge", words[0]) if words else None
    if obj == "monitor":
        return read_only("'bridge monitor' only reads")
    verb = iproute2_verb("bridge", obj, words[1] if len(words) > 1 else "show") if obj else None
    shown = [obj or (words[0] if words else ""), verb or (words[1] if len(words) > 1 else "")]
    label = " ".join(["bridge", *filter(None, shown)])
    if verb in ("show", "list", "lst", "get", "help"):
        return read_only(f"'{label}' only reads")
    return mutating(f"'{label}' changes bridges")


def _endpoints(parsed: Parsed, *options: str) -> list[Outcome]:
    found: list[Outcome] = []
    for option in options:
        for value in parsed.values(option):
            if value.startswith(("unix://", "/")):
                continue
            if problem := endpoint_problem(value, f"'{option}' sends requests to"):
                found += mutating(problem)
    return found


def cluster_rules() -> dict[str, ProgramRule]:
    return {"dcgmi": _dcgmi, "crictl": _crictl, "helm": _helm, "ipmitool": _ipmitool,
            "fuser": _fuser, "chronyc": _chronyc, "bridge": _bridge}  # fmt: skip
