"""Rules for the tools a GPU deployment drives: docker, systemd, nvidia-smi, ray, hf, pip, git."""

from __future__ import annotations

from agent.safety.shell.outcomes import (
    Outcome,
    Rule,
    RunsCommand,
    RunsScript,
    destructive,
    mutating,
    read_only,
    read_options,
    word_set,
)
from agent.safety.shell.paths import is_system_path
from agent.safety.shell.rules_launch import exec_in_container

DOCKER_GLOBAL_VALUE_OPTIONS = frozenset(
    {"-H", "--host", "-c", "--context", "-l", "--log-level", "--config", "--tlscacert",
     "--tlscert", "--tlskey"}
)  # fmt: skip
DOCKER_EXEC_VALUE_OPTIONS = frozenset(
    {"-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys"}
)
DOCKER_RUN_VALUE_OPTIONS = word_set(
    """-e --env --env-file -v --volume --name -p --publish --network --net --ipc --shm-size
    --ulimit --device --gpus --entrypoint -w --workdir -u --user --cap-add --cap-drop --mount
    --runtime --label -l --restart --pull --platform -m --memory --memory-swap --cpus --cpuset-cpus
    -h --hostname --add-host --security-opt --log-driver --log-opt --tmpfs --volumes-from --cidfile
    --pid --uts --userns --cgroupns --health-cmd --health-interval --stop-signal --stop-timeout
    --dns --group-add --ip --mac-address --expose --label-file --sysctl --storage-opt -a --attach
    --device-cgroup-rule --oom-score-adj --cgroup-parent --isolation --link --network-alias
    --annotation"""
)
COMPOSE_VALUE_OPTIONS = frozenset(
    {"-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory",
     "--ansi", "--progress"}
)  # fmt: skip
DOCKER_READ = {
    "ps", "images", "inspect", "logs", "version", "info", "top", "port", "diff", "history",
    "search", "events", "ls", "df", "config",
}  # fmt: skip
DOCKER_DESTRUCTIVE = {
    "rm": "removes a container", "rmi": "removes an image", "stop": "stops a container",
    "kill": "kills a container", "prune": "deletes unused objects", "down": "stops and removes "
    "the stack's containers", "leave": "leaves the swarm",
}  # fmt: skip
DOCKER_OBJECTS = frozenset(
    {"container", "image", "network", "volume", "system", "builder", "buildx", "plugin", "node",
     "service", "context", "manifest", "compose", "swarm", "secret", "config", "trust"}
)  # fmt: skip
SYSTEMCTL_READ = frozenset(
    {"status", "is-active", "is-enabled", "is-failed", "is-system-running", "list-units",
     "list-unit-files", "list-timers", "list-sockets", "list-dependencies", "list-jobs",
     "list-machines", "show", "cat", "get-default", "help", "show-environment"}
)  # fmt: skip
SYSTEMCTL_DESTRUCTIVE = frozenset(
    {"stop", "disable", "mask", "kill", "poweroff", "reboot", "halt", "isolate", "kexec",
     "emergency", "rescue", "suspend", "hibernate", "soft-reboot", "hybrid-sleep"}
)  # fmt: skip
SYSTEMCTL_VALUE_OPTIONS = frozenset(
    {"-t", "--type", "-p", "--property", "-n", "--lines", "-H", "--host", "-M", "--machine",
     "-s", "--signal", "--state", "-o", "--output", "--root", "--kill-whom", "--job-mode"}
)  # fmt: skip
NVIDIA_SMI_QUERY_FLAGS = frozenset(
    {"-L", "--list-gpus", "-q", "--query", "-x", "--xml-format", "-h", "--help", "--version",
     "-B", "--list-excluded-gpus", "-u", "--unit", "--dtd", "--debug"}
)  # fmt: skip
NVIDIA_SMI_QUERY_VALUES = frozenset(
    {"-i", "--id", "-d", "--display", "--format", "-l", "--loop", "-lms", "--loop-ms", "-f",
     "--filename"}
)  # fmt: skip
NVIDIA_SMI_READ_SUBCOMMANDS = {
    "topo": frozenset({"-m", "--matrix", "-mp", "--matrix_pci", "-p2p", "-i", "--id", "-n", "-c"}),
    "nvlink": frozenset({"-s", "--status", "-c", "--capabilities", "-i", "--id", "-p", "-gt"}),
    "pmon": frozenset({"-c", "-s", "-d", "-i", "-o", "--count", "--select", "--delay", "--id"}),
    "dmon": frozenset({"-c", "-s", "-d", "-i", "-o", "--count", "--select", "--delay", "--id"}),
    "mig": frozenset({"-lgi", "-lgip", "-lci", "-lcip", "--list-gpu-instances", "-i", "--id",
                      "--list-gpu-instance-profiles", "--list-compute-instances",
                      "--list-compute-instance-profiles", "-gi", "--gpu-instance-id"}),
}  # fmt: skip
GIT_READ = frozenset(
    {"status", "log", "diff", "show", "rev-parse", "ls-files", "blame", "describe", "shortlog",
     "ls-remote", "grep", "cat-file", "rev-list", "reflog", "version", "help"}
)  # fmt: skip
KUBECTL_VALUE_OPTIONS = word_set(
    "-n --namespace --context --kubeconfig -o --output -l --selector -c --container --cluster "
    "--user -s --server"
)
TMUX_NEW_VALUE_OPTIONS = frozenset({"-s", "-n", "-c", "-t", "-x", "-y", "-e", "-F", "-l", "-f"})
TMUX_READ = frozenset(
    {"ls", "list-sessions", "list-windows", "lsw", "list-panes", "lsp", "has-session", "has",
     "capture-pane", "capturep", "show-options", "show", "list-clients", "lsc", "display-message",
     "display", "show-environment", "showenv", "list-buffers", "lsb"}
)  # fmt: skip


def _docker(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, DOCKER_GLOBAL_VALUE_OPTIONS, stop_at_positional=True)
    rest = args[parsed.rest_index :]
    if not rest:
        if parsed.has("-v", "--version", "-h", "--help"):
            return read_only("'docker --version' prints a version")
        return mutating("'docker' without a subcommand")
    if name == "docker-compose":
        rest = ["compose", *rest]
    if rest[0] == "compose":
        return _docker_compose(rest[1:])
    if rest[0] in DOCKER_OBJECTS and len(rest) > 1:
        return _docker_object(rest[0], rest[1], rest[2:])
    return _docker_action(rest[0], rest[1:], f"docker {rest[0]}")


def _docker_object(obj: str, action: str, args: list[str]) -> list[Outcome]:
    label = f"docker {obj} {action}"
    if obj == "system" and action in ("df", "info", "events"):
        return read_only(f"'{label}' only reads")
    if action in ("ls", "list", "inspect", "history", "logs", "top", "port", "diff", "stats"):
        return _docker_action(action, args, label)
    if action in ("rm", "remove", "prune", "stop", "kill", "leave", "rmi"):
        return destructive(f"'{label}' {DOCKER_DESTRUCTIVE.get(action, 'removes objects')}")
    return _docker_action(action, args, label)


def _docker_compose(args: list[str]) -> list[Outcome]:
    parsed = read_options(args, COMPOSE_VALUE_OPTIONS, stop_at_positional=True)
    if parsed.rest_index >= len(args):
        return mutating("'docker compose' without a subcommand")
    action = args[parsed.rest_index]
    args = args[parsed.rest_index + 1 :]
    label = f"docker compose {action}"
    if action in ("ps", "logs", "config", "ls", "images", "top", "version", "port", "events"):
        return read_only(f"'{label}' only reads")
    if action in ("down", "rm", "stop", "kill"):
        return destructive(f"'{label}' stops or removes the stack's containers")
    if action in ("exec", "run"):
        values = frozenset({"-e", "--env", "-u", "--user", "-w", "--workdir", "--index"})
        floor = mutating(f"'{label}' starts a container") if action == "run" else []
        return floor + exec_in_container(args, label, values)
    return mutating(f"'{label}' changes the stack")


def _docker_action(action: str, args: list[str], label: str) -> list[Outcome]:
    if action == "stats":
        if "--no-stream" in args:
            return read_only(f"'{label} --no-stream' prints one sample")
        return mutating(f"'{label}' without --no-stream never ends")
    if action in DOCKER_READ:
        return read_only(f"'{label}' only reads")
    if action in DOCKER_DESTRUCTIVE:
        return destructive(f"'{label}' {DOCKER_DESTRUCTIVE[action]}")
    if action == "exec":
        return exec_in_container(args, "docker exec", DOCKER_EXEC_VALUE_OPTIONS)
    if action in ("run", "create"):
        outcomes = mutating(f"'{label}' starts a new container")
        parsed = read_options(args, DOCKER_RUN_VALUE_OPTIONS, stop_at_positional=True)
        inner = args[parsed.rest_index + 1 :]
        if action == "run" and inner:
            outcomes.append(RunsCommand(tuple(inner), f"{label} {args[parsed.rest_index]}"))
        return outcomes
    if action == "save" and not any(a in ("-o", "--output") for a in args):
        return read_only(f"'{label}' writes the image to stdout")
    return mutating(f"'{label}' changes containers or images")


def _kubectl(name: str, args: list[str]) -> list[Outcome]:
    values = KUBECTL_VALUE_OPTIONS
    parsed = read_options(args, values, stop_at_positional=True)
    rest = args[parsed.rest_index :]
    if not rest:
        return mutating("'kubectl' without a subcommand")
    verb = rest[0]
    if verb in ("get", "describe", "logs", "top", "explain", "version", "api-resources",
                "api-versions", "cluster-info", "events", "diff"):  # fmt: skip
        return read_only(f"'kubectl {verb}' only reads")
    if (
        verb == "config"
        and len(rest) > 1
        and rest[1] in ("view", "get-contexts", "current-context")
    ):
        return read_only(f"'kubectl config {rest[1]}' only reads")
    if verb == "auth" and len(rest) > 1 and rest[1] == "can-i":
        return read_only("'kubectl auth can-i' only asks")
    if verb in ("delete", "drain"):
        return destructive(f"'kubectl {verb}' removes workloads")
    if verb == "exec":
        return exec_in_container(rest[1:], "kubectl exec", values)
    return mutating(f"'kubectl {verb}' changes the cluster")


def _systemctl(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, SYSTEMCTL_VALUE_OPTIONS)
    if parsed.has("--version", "-h", "--help") and not parsed.positionals:
        return read_only("'systemctl --version' prints a version")
    verb = parsed.positionals[0] if parsed.positionals else "list-units"
    if verb in SYSTEMCTL_READ:
        return read_only(f"'systemctl {verb}' only reads")
    if verb in SYSTEMCTL_DESTRUCTIVE:
        return destructive(f"'systemctl {verb}' stops services or the host")
    return mutating(f"'systemctl {verb}' changes services")


def _journalctl(name: str, args: list[str]) -> list[Outcome]:
    if any(a.startswith("--vacuum") for a in args):
        return destructive("'journalctl --vacuum' deletes archived logs")
    if any(a in ("--rotate", "--flush", "--sync", "--relinquish-var", "--setup-keys",
                 "--update-catalog", "--smart-relinquish-var") for a in args):  # fmt: skip
        return mutating("'journalctl' changes the journal")
    return read_only("'journalctl' only reads logs")


def _nvidia_smi(name: str, args: list[str]) -> list[Outcome]:
    if any(a in ("-r", "--gpu-reset") for a in args):
        return destructive("'nvidia-smi -r' resets the GPU")
    flags, values, rest = NVIDIA_SMI_QUERY_FLAGS, NVIDIA_SMI_QUERY_VALUES, args
    if args and args[0] in NVIDIA_SMI_READ_SUBCOMMANDS:
        if args[0] == "mig" and any(
            a in ("-dgi", "-dci") or a.startswith("--destroy") for a in args
        ):
            return destructive("'nvidia-smi mig -dgi/-dci' destroys GPU instances")
        flags = values = NVIDIA_SMI_READ_SUBCOMMANDS[args[0]]
        rest = args[1:]
    value_expected = False
    for arg in rest:
        option = arg.split("=", 1)[0]
        if option in ("-f", "--filename"):
            return mutating("'nvidia-smi -f' writes a log file")
        if arg.startswith("--query-") or (option in values and "=" in arg):
            value_expected = False
        elif arg in flags or arg in values:
            value_expected = arg in values
        elif value_expected and not arg.startswith("-"):
            value_expected = False
        else:
            return mutating(
                f"'nvidia-smi {arg}' is not a known query option (it may change the GPU)"
            )
    return read_only("'nvidia-smi' query only reads")


def _version_only(tool: str, reads: frozenset[str], *, alone_reads: bool = False) -> Rule:
    """Read-only for `--version`-style calls and listed subcommands, mutating otherwise."""

    def rule(name: str, args: list[str]) -> list[Outcome]:
        if not args and alone_reads:
            return read_only(f"'{tool}' alone only shows status")
        if args and (args[0] in ("--version", "-V", "version", "-h", "--help") or args[0] in reads):
            return read_only(f"'{tool} {args[0]}' only reads")
        return mutating(f"'{tool}' {'runs ' + args[0] if args else 'without arguments'}")

    return rule


def _ray(name: str, args: list[str]) -> list[Outcome]:
    if args and args[0] == "stop":
        return destructive("'ray stop' stops the Ray cluster on this node")
    if args and args[0] in ("status", "list", "summary", "memory", "get", "--version", "version"):
        return read_only(f"'ray {args[0]}' only reads")
    if args[:1] == ["job"] and len(args) > 1 and args[1] in ("list", "status", "logs"):
        return read_only(f"'ray job {args[1]}' only reads")
    return mutating(f"'ray {args[0] if args else ''}' changes the Ray cluster".replace("  ", " "))


def _hf(name: str, args: list[str]) -> list[Outcome]:
    words = [a for a in args if not a.startswith("-")]
    head = " ".join(words[:2])
    if words[:1] and words[0] in ("scan-cache", "env", "whoami", "version"):
        return read_only(f"'{name} {words[0]}' only reads")
    if head in ("auth whoami", "cache ls", "cache scan", "cache list") or "--version" in args:
        return read_only(f"'{name} {head}' only reads")
    if (words[:1] == ["delete-cache"]) or head in ("cache delete", "cache rm", "repo delete"):
        return destructive(f"'{name} {head}' deletes cached models or repositories")
    return mutating(f"'{name} {words[0] if words else ''}' downloads, uploads or logs in")


def _pip(name: str, args: list[str]) -> list[Outcome]:
    words = [a for a in args if not a.startswith("-")]
    if not words and any(a in ("--version", "-V", "-h", "--help") for a in args):
        return read_only(f"'{name} --version' prints a version")
    verb = words[0] if words else ""
    if verb in ("list", "show", "freeze", "check", "help", "debug", "inspect", "search", "index"):
        return read_only(f"'{name} {verb}' only reads")
    if verb == "config" and len(words) > 1 and words[1] in ("list", "get", "debug"):
        return read_only(f"'{name} config {words[1]}' only reads")
    if verb == "uninstall":
        return destructive(f"'{name} uninstall' removes packages")
    return mutating(f"'{name} {verb}' changes installed packages")


def _python(name: str, args: list[str]) -> list[Outcome]:
    if args[:1] and args[0] in ("--version", "-V", "-VV"):
        return read_only(f"'{name} --version' prints a version")
    if args[:2] == ["-m", "json.tool"] and len([a for a in args[2:] if a[:1] != "-"]) < 2:
        return read_only(f"'{name} -m json.tool' only formats JSON")
    if args[:2] in (["-m", "pip"], ["-m", "pip3"]):
        return _pip("pip", args[2:])
    if args[:1] == ["-c"]:
        return mutating(f"'{name} -c' runs Python code")
    return mutating(f"'{name}' runs a program")


def _apt(name: str, args: list[str]) -> list[Outcome]:
    words = [a for a in args if not a.startswith("-")]
    verb = words[0] if words else ""
    if name == "apt-cache" and verb != "gencaches":
        return read_only(f"'apt-cache {verb}' only reads")
    if verb in ("list", "show", "search", "policy", "depends", "rdepends", "changelog", "help"):
        return read_only(f"'{name} {verb}' only reads")
    if verb in ("remove", "purge", "autoremove", "autopurge"):
        return destructive(f"'{name} {verb}' removes packages")
    return mutating(f"'{name} {verb}' changes packages or package lists")


def _dpkg(name: str, args: list[str]) -> list[Outcome]:
    reading = ("-l", "--list", "-s", "--status", "-L", "--listfiles", "-S", "--search", "-p",
               "--print-avail", "--print-architecture", "--get-selections", "--version",
               "--compare-versions", "-C", "--audit")  # fmt: skip
    if any(a in ("-r", "-P", "--remove", "--purge") for a in args):
        return destructive("'dpkg -r/-P' removes packages")
    if args and args[0] in reading:
        return read_only(f"'dpkg {args[0]}' only reads")
    return mutating("'dpkg' changes packages")


def _git(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(
        args, frozenset({"-C", "-c", "--git-dir", "--work-tree"}), stop_at_positional=True
    )
    rest = args[parsed.rest_index :]
    verb = rest[0] if rest else ""
    tail = rest[1:]
    if parsed.has("-c"):
        return mutating("'git -c' sets options that can run commands (pager, ssh, diff)")
    output = next((a.split("=", 1)[-1] for a in tail if a.startswith("--output")), None)
    if output is not None and is_system_path(output):
        return destructive(f"'git {verb} --output' writes into system path {output}")
    if output is not None:
        return mutating(f"'git {verb} --output' writes a file")
    if any(a in ("-O", "--ext-diff") or a.startswith("--open-files-in-pager") for a in tail):
        return mutating(f"'git {verb}' runs an external program")
    if verb == "reset" and "--hard" in tail:
        return destructive("'git reset --hard' discards local changes")
    if verb == "clean" and any(a.startswith("-") and "f" in a.lstrip("-") for a in tail):
        return destructive("'git clean -f' deletes untracked files")
    if verb == "push" and any(a in ("-f", "--force", "--delete", "-d") for a in tail):
        return destructive("'git push --force/--delete' rewrites a remote")
    if verb == "checkout" and ("--" in tail or "." in tail or "-f" in tail):
        return destructive("'git checkout -- PATH' discards local changes")
    if verb in GIT_READ or (verb in ("branch", "remote", "tag", "stash") and _lists(tail)):
        return read_only(f"'git {verb}' only reads")
    if verb == "config" and any(a in ("--get", "--list", "-l", "--get-all") for a in tail):
        return read_only("'git config --get/--list' only reads")
    return mutating(f"'git {verb}' changes the repository")


def _lists(tail: list[str]) -> bool:
    return all(
        a.startswith("-") and a not in ("-d", "-D", "-m", "-M", "--delete") for a in tail
    ) or (tail[:1] == ["list"])


def _tmux(name: str, args: list[str]) -> list[Outcome]:
    values = frozenset({"-L", "-S", "-f", "-c", "-T"})
    parsed = read_options(args, values, stop_at_positional=True)
    rest = args[parsed.rest_index :]
    verb = rest[0] if rest else ""
    if verb in TMUX_READ:
        return read_only(f"'tmux {verb}' only reads")
    if verb.startswith("kill-"):
        return destructive(f"'tmux {verb}' ends sessions and the programs in them")
    if verb in ("send-keys", "send"):
        keys = read_options(rest[1:], frozenset({"-t", "-N"}), stop_at_positional=True)
        typed = [k for k in rest[1 + keys.rest_index :] if k not in ("Enter", "C-m", "KPEnter")]
        return [
            *mutating(f"'tmux {verb}' types into a shell"),
            RunsScript(" ".join(typed), "tmux send-keys"),
        ]
    if verb in (
        "new-session",
        "new",
        "new-window",
        "neww",
        "respawn-pane",
        "split-window",
        "splitw",
    ):
        started = read_options(rest[1:], TMUX_NEW_VALUE_OPTIONS, stop_at_positional=True)
        command = rest[1 + started.rest_index :]
        if command:
            return [
                *mutating(f"'tmux {verb}' starts a session"),
                RunsScript(" ".join(command), f"tmux {verb}"),
            ]
    return mutating(f"'tmux {verb or 'new-session'}' starts or changes sessions")


def _screen(name: str, args: list[str]) -> list[Outcome]:
    if args and args[0] in ("-ls", "-list", "--version", "-v"):
        return read_only(f"'screen {args[0]}' only lists sessions")
    return mutating("'screen' starts or drives a session")


def service_rules() -> dict[str, Rule]:
    rules: dict[str, Rule] = {
        "docker": _docker,
        "docker-compose": _docker,
        "podman": _docker,
        "kubectl": _kubectl,
        "systemctl": _systemctl,
        "journalctl": _journalctl,
        "nvidia-smi": _nvidia_smi,
        "ray": _ray,
        "hf": _hf,
        "huggingface-cli": _hf,
        "apt": _apt,
        "apt-get": _apt,
        "apt-cache": _apt,
        "dpkg": _dpkg,
        "dpkg-query": _dpkg,
        "git": _git,
        "tmux": _tmux,
        "screen": _screen,
        "nvcc": _version_only("nvcc", frozenset()),
        "vllm": _version_only("vllm", frozenset()),
        "nvidia-ctk": _version_only("nvidia-ctk", frozenset()),
        "hostnamectl": _version_only("hostnamectl", frozenset({"status"}), alone_reads=True),
        "timedatectl": _version_only(
            "timedatectl", frozenset({"status", "show"}), alone_reads=True
        ),
    }
    rules.update(dict.fromkeys(("pip", "pip3", "uv"), _pip))
    rules.update(dict.fromkeys(("python", "python3"), _python))
    return rules
