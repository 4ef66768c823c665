"""Rules for the GPU and model-serving tools: nvidia-smi, the container toolkit, ray, vllm, hf.

Their queries read; anything that sets a GPU mode, loads kernel modules, writes a log file,
starts a server or downloads weights is mutating, and resets or deletions are destructive.
"""

from __future__ import annotations

from agent.safety.shell.options import grammar, read_args
from agent.safety.shell.outcomes import (
    Outcome,
    ProgramRule,
    destructive,
    judge_options,
    mutating,
    not_understood,
    read_only,
    written_file,
)
from agent.safety.shell.shell_words import RuntimeText

NVIDIA_SMI_QUERY_FLAGS = frozenset(
    {"-L", "--list-gpus", "-q", "--query", "-x", "--xml-format", "-h", "--help", "--version",
     "-B", "--list-excluded-gpus", "-u", "--unit", "--dtd"}
)  # fmt: skip
NVIDIA_SMI_QUERY_VALUES = frozenset(
    {"-i", "--id", "-d", "--display", "--format", "-l", "--loop", "-lms", "--loop-ms"}
)
NVIDIA_SMI_READ_SUBCOMMANDS = {
    "topo": frozenset({"-m", "--matrix", "-mp", "--matrix_pci", "-p2p", "-i", "--id", "-n", "-c"}),
    "nvlink": frozenset({"-s", "--status", "-c", "--capabilities", "-i", "--id", "-p", "-gt",
                         "--pcibusid", "-R", "--remotelinkinfo", "-e", "--errorcounters", "-ec",
                         "--crcerrorcounters", "-l", "--link", "-gc", "--getcontrol", "-g",
                         "--getcounters", "--getthroughput"}),
    "pmon": frozenset({"-c", "-s", "-d", "-i", "-o", "--count", "--select", "--delay", "--id"}),
    "dmon": frozenset({"-c", "-s", "-d", "-i", "-o", "--count", "--select", "--delay", "--id"}),
    "mig": frozenset({"-lgi", "-lgip", "-lci", "-lcip", "--list-gpu-instances", "-i", "--id",
                      "--list-gpu-instance-profiles", "--list-compute-instances",
                      "--list-compute-instance-profiles", "-gi", "--gpu-instance-id"}),
}  # fmt: skip
CONTAINER_CLI = grammar(
    "-d|--debug=:w -k|--load-kmods:m -l|--ldcache= -r|--root= -s|--syslog -u|--user[=] "
    "-?|--help --usage -V|--version",
    stop_at_positional=True,
)
CONTAINER_CLI_READ = {
    "info": grammar("-c|--csv -?|--help"),
    "list": grammar(
        "-b|--binaries -c|--compat32 -f|--firmwares -i|--ipcs -l|--libraries "
        "-d|--device= --mig-config= --mig-monitor= --imex-channel= -?|--help"
    ),
}
RAY_READ = grammar(
    "--address= --redis_password= -v|--verbose --filter= -f= --limit= --detail --format= "
    "--timeout= --exclude-driver --group-by= --sort-by= --units= --no-format --stats-only "
    "--num-entries= --help -h --namespace= --job-id= --log-style= --log-color= --logging-level= "
    "--logging-format= --address-token= --headers= --verify= -o|--output="
)
RAY_READ_VERBS = frozenset({"status", "list", "summary", "memory", "get", "--version", "version",
                            "timeline-print"})  # fmt: skip
HF_READ = grammar("--dir= --cache-dir= -v|--verbose -h|--help --format= -q|--quiet --sort= "
                  "--filter= --limit= --revisions --token=")  # fmt: skip


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
    for index, arg in enumerate(rest):
        option, _, attached = arg.partition("=")
        if isinstance(arg, RuntimeText):
            return mutating(f"'nvidia-smi' gets a word only known at run time ({arg})")
        if option in ("-f", "--filename"):
            target = attached or (rest[index + 1] if index + 1 < len(rest) else None)
            return written_file("nvidia-smi -f", target) or mutating("'nvidia-smi -f' writes")
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


def _container_cli(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, CONTAINER_CLI, why={
        "-k": "loads kernel modules", "-d": "writes a debug log"})  # fmt: skip
    if found:
        return found
    if not parsed.rest:
        if parsed.has("-V", "-?", "--usage"):
            return read_only(f"'{name} --version' prints a version")
        return mutating(f"'{name}' without a command")
    command = parsed.rest[0]
    spec = CONTAINER_CLI_READ.get(command)
    if spec is None:
        return mutating(f"'{name} {command}' changes a container's setup")
    _, found = judge_options(f"{name} {command}", parsed.rest[1:], spec)
    return found or read_only(f"'{name} {command}' only reads")


def _version_only(tool: str, reads: frozenset[str] = frozenset()) -> ProgramRule:
    """Read-only for `--version`-style calls and listed subcommands, mutating otherwise."""

    def rule(name: str, args: list[str]) -> list[Outcome]:
        if len(args) == 1 and (args[0] in ("--version", "-V", "version", "-h", "--help")):
            return read_only(f"'{tool} {args[0]}' only reads")
        if args and args[0] in reads and not any(isinstance(a, RuntimeText) for a in args):
            return read_only(f"'{tool} {args[0]}' only reads")
        return mutating(f"'{tool}' {'runs ' + args[0] if args else 'without arguments'}")

    return rule


def _ray(name: str, args: list[str]) -> list[Outcome]:
    if args[:1] == ["stop"]:
        return destructive("'ray stop' stops the Ray cluster on this node")
    verb = args[0] if args else ""
    if verb == "job" and len(args) > 1 and args[1] in ("list", "status", "logs"):
        verb, rest = f"job {args[1]}", args[2:]
    elif verb in RAY_READ_VERBS:
        rest = args[1:]
    else:
        return mutating(f"'ray {verb}' changes the Ray cluster".replace("  ", " "))
    parsed = read_args(rest, RAY_READ)
    if problems := not_understood(f"ray {verb}", parsed, RAY_READ):
        return problems
    return read_only(f"'ray {verb}' only reads")


def _hf(name: str, args: list[str]) -> list[Outcome]:
    words = [a for a in args if not a.startswith("-")]
    head = " ".join(words[:2])
    if (words[:1] == ["delete-cache"]) or head in ("cache delete", "cache rm", "repo delete",
                                                   "cache prune"):  # fmt: skip
        return destructive(f"'{name} {head}' deletes cached models or repositories")
    reads = words[:1] in (["scan-cache"], ["env"], ["whoami"], ["version"]) or head in (
        "auth whoami",
        "auth list",
        "cache ls",
        "cache scan",
        "cache list",
    )
    if not args or args == ["--version"] or args == ["--help"]:
        return read_only(f"'{name}' only prints")
    if reads:
        count = 1 if words[0] in ("scan-cache", "env", "whoami", "version") else 2
        rest = args[args.index(words[count - 1]) + 1 :]
        parsed = read_args(rest, HF_READ)
        if problems := not_understood(name, parsed, HF_READ):
            return problems
        if parsed.positionals:
            return mutating(f"'{name} {head}' gets arguments that are not known to be harmless")
        return read_only(f"'{name} {head}' only reads")
    return mutating(f"'{name} {words[0] if words else ''}' downloads, uploads or logs in")


def gpu_rules() -> dict[str, ProgramRule]:
    return {
        "nvidia-smi": _nvidia_smi,
        "nvidia-container-cli": _container_cli,
        "nvidia-ctk": _version_only("nvidia-ctk", frozenset({"info"})),
        "nvcc": _version_only("nvcc"),
        "vllm": _version_only("vllm", frozenset({"collect-env"})),
        "ray": _ray,
        "hf": _hf,
        "huggingface-cli": _hf,
    }
