"""Rules for commands that run other commands: wrappers, shells, remote and container execution.

What counts is the inner command, so these rules mostly say what runs (`RunsCommand`,
`RunsScript`, `RunsStdin`) and let the classifier judge it.
"""

from __future__ import annotations

from agent.safety.shell.outcomes import (
    Outcome,
    Rule,
    RunsCommand,
    RunsScript,
    RunsStdin,
    Verdict,
    destructive,
    mutating,
    read_only,
    read_options,
)
from tools.base import Risk

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash"})
SUDO_VALUE_OPTIONS = frozenset(
    {"-u", "--user", "-g", "--group", "-h", "--host", "-p", "--prompt", "-C", "--close-from",
     "-r", "--role", "-t", "--type", "-U", "--other-user", "-T", "--command-timeout", "-D",
     "--chdir"}
)  # fmt: skip
SSH_VALUE_OPTIONS = frozenset(
    {"-p", "-i", "-l", "-o", "-F", "-J", "-L", "-R", "-D", "-b", "-c", "-E", "-e", "-I", "-m",
     "-O", "-Q", "-S", "-W", "-w", "-B"}
)  # fmt: skip
XARGS_VALUE_OPTIONS = frozenset(
    {"-I", "-n", "-P", "-d", "-L", "-s", "-a", "-E", "--max-args", "--max-procs", "--delimiter",
     "--arg-file", "--replace", "--max-lines", "--max-chars", "--eof"}
)  # fmt: skip
RISKY_VARIABLES = frozenset(
    {"PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV", "ENV", "PROMPT_COMMAND",
     "PAGER", "SYSTEMD_PAGER", "GIT_PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "EDITOR",
     "VISUAL", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_CONFIG_PARAMETERS", "PYTHONSTARTUP",
     "SHELLOPTS", "IFS"}
)  # fmt: skip
SSH_COMMAND_OPTIONS = ("proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand")
FIND_EXEC_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
FIND_WRITE_ACTIONS = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})


def risky_assignment(text: str) -> Verdict | None:
    """`PAGER=…`, `LD_PRELOAD=…`, `PATH=…` change which program runs, whatever the command is."""
    name = text.split("=", 1)[0].rstrip("+")
    if name in RISKY_VARIABLES:
        return Verdict(Risk.MUTATING, f"'{name}=…' changes which program runs")
    return None


def _assignments_floor(args: list[str], start: int) -> tuple[int, list[Outcome]]:
    """Skip `VAR=value` words from `start`; return where the command begins and any risky ones."""
    floor: list[Outcome] = []
    index = start
    while index < len(args) and "=" in args[index] and not args[index].startswith(("=", "-")):
        if verdict := risky_assignment(args[index]):
            floor.append(verdict)
        index += 1
    return index, floor


def _inner(args: list[str], index: int, via: str, alone: list[Outcome]) -> list[Outcome]:
    if index >= len(args):
        return alone
    return [RunsCommand(tuple(args[index:]), via)]


def _sudo(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, SUDO_VALUE_OPTIONS, stop_at_positional=True)
    if parsed.has("-l", "--list") and parsed.rest_index >= len(args):
        return read_only("'sudo -l' lists what may be run")
    index, floor = _assignments_floor(args, parsed.rest_index)
    if parsed.has("-i", "-s", "--login", "--shell") and index >= len(args):
        return mutating("'sudo -i/-s' opens a root shell")
    return floor + _inner(args, index, "sudo", mutating("'sudo' without a command"))


def _env(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(
        args, frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
        stop_at_positional=True,
    )  # fmt: skip
    split = parsed.options.get("-S") or parsed.options.get("--split-string")
    if split:
        return [RunsScript(split, "env -S")]
    index, floor = _assignments_floor(args, parsed.rest_index)
    return floor + _inner(args, index, "env", read_only("'env' alone prints the environment"))


def _simple_wrapper(value_options: frozenset[str], alone: str) -> Rule:
    def rule(name: str, args: list[str]) -> list[Outcome]:
        parsed = read_options(args, value_options, stop_at_positional=True)
        return _inner(args, parsed.rest_index, name, read_only(f"'{name}' {alone}"))

    return rule


def _timeout(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(
        args, frozenset({"-s", "--signal", "-k", "--kill-after"}), stop_at_positional=True
    )
    return _inner(args, parsed.rest_index + 1, "timeout", mutating("'timeout' without a command"))


def _taskset(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, frozenset(), stop_at_positional=True)
    if parsed.has("-p", "--pid"):
        remaining = len(args) - parsed.rest_index
        if remaining <= 1:
            return read_only("'taskset -p PID' shows an affinity")
        return mutating("'taskset -p' changes a process's CPU affinity")
    return _inner(args, parsed.rest_index + 1, "taskset", mutating("'taskset' without a command"))


def _xargs(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, XARGS_VALUE_OPTIONS, stop_at_positional=True)
    return _inner(args, parsed.rest_index, "xargs", [RunsCommand(("echo",), "xargs")])


def _command(name: str, args: list[str]) -> list[Outcome]:
    if args and args[0] in ("-v", "-V"):
        return read_only("'command -v' only looks a name up")
    index = 1 if args and args[0] == "-p" else 0
    return _inner(args, index, name, read_only(f"'{name}' without a command does nothing"))


def _watch(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(
        args, frozenset({"-n", "--interval", "-d", "--differences", "-q", "--equexit"}),
        stop_at_positional=True,
    )  # fmt: skip
    if parsed.rest_index >= len(args):
        return mutating("'watch' without a command")
    return [RunsScript(" ".join(args[parsed.rest_index :]), "watch")]


def _eval(name: str, args: list[str]) -> list[Outcome]:
    return [RunsScript(" ".join(args), "eval")] if args else read_only("'eval' of nothing")


def _trap(name: str, args: list[str]) -> list[Outcome]:
    if len(args) >= 2 and args[0] not in ("-", "-p", "-l", ""):
        return [RunsScript(args[0], "trap")]
    return read_only("'trap' only lists or resets traps")


def _shell(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(
        args, frozenset({"-o", "+o", "--rcfile", "--init-file"}), stop_at_positional=True
    )
    if parsed.has("-s") and not parsed.has("-c"):
        return [RunsStdin(name)]
    if parsed.has("-c"):
        if parsed.rest_index >= len(args):
            return mutating(f"'{name} -c' without a command string")
        return [RunsScript(args[parsed.rest_index], f"{name} -c")]
    if parsed.rest_index < len(args):
        if parsed.has("--version"):
            return read_only(f"'{name} --version' prints a version")
        script = args[parsed.rest_index]
        return mutating(f"'{name} {script}' runs a script whose contents were not read")
    if parsed.has("--version"):
        return read_only(f"'{name} --version' prints a version")
    return [RunsStdin(name)]


def _su(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, frozenset({"-c", "--command", "-s", "--shell", "-g", "-G"}))
    command = parsed.options.get("-c") or parsed.options.get("--command")
    if command:
        return [RunsScript(command, "su -c")]
    return mutating("'su' opens a shell as another user")


def _ssh(name: str, args: list[str]) -> list[Outcome]:
    parsed = read_options(args, SSH_VALUE_OPTIONS, stop_at_positional=True)
    if parsed.has("-V", "-G"):
        return read_only(f"'ssh {'-V' if parsed.has('-V') else '-G'}' only prints")
    if parsed.rest_index >= len(args):
        return mutating("'ssh' without a host")
    if parsed.has("-N", "-L", "-R", "-D", "-W", "-w"):
        return mutating("'ssh' opens a tunnel or port forward")
    option_text = " ".join(a.lower() for a in args[: parsed.rest_index])
    if any(option in option_text for option in SSH_COMMAND_OPTIONS):
        return mutating("'ssh -o ProxyCommand/LocalCommand' runs a local command")
    host = args[parsed.rest_index]
    remote = args[parsed.rest_index + 1 :]
    if remote[:1] == ["--"]:
        remote = remote[1:]
    if not remote:
        return [RunsStdin(f"ssh {host}")]
    return [RunsScript(" ".join(remote), f"ssh {host}")]


def _find(name: str, args: list[str]) -> list[Outcome]:
    outcomes: list[Outcome] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in FIND_EXEC_ACTIONS:
            end = index + 1
            while end < len(args) and args[end] not in (";", "+"):
                end += 1
            if end == index + 1:
                return mutating(f"'find {arg}' without a command")
            outcomes.append(RunsCommand(tuple(args[index + 1 : end]), f"find {arg}"))
            index = end
        elif arg == "-delete":
            outcomes.extend(destructive("'find -delete' deletes what it finds"))
        elif arg in FIND_WRITE_ACTIONS:
            outcomes.extend(mutating(f"'find {arg}' writes a file"))
        index += 1
    return outcomes or read_only("'find' without -exec/-delete only lists")


def ip_netns_exec(args: list[str]) -> list[Outcome] | None:
    """`ip netns exec NS cmd…` runs a command; None when the args are something else."""
    if len(args) >= 3 and args[0] == "netns" and args[1] == "exec":
        return _inner(
            args, 3, f"ip netns exec {args[2]}", mutating("'ip netns exec' without a command")
        )
    return None


def exec_in_container(args: list[str], via: str, value_options: frozenset[str]) -> list[Outcome]:
    """`… exec [opts] TARGET cmd…`: what runs is the command after the target."""
    parsed = read_options(args, value_options, stop_at_positional=True)
    if parsed.rest_index + 1 >= len(args):
        return mutating(f"'{via}' without a command")
    target = args[parsed.rest_index]
    index = parsed.rest_index + 1
    if args[index] == "--":
        index += 1
    return _inner(args, index, f"{via} {target}", mutating(f"'{via}' without a command"))


def launch_rules() -> dict[str, Rule]:
    rules: dict[str, Rule] = dict.fromkeys(SHELLS, _shell)
    rules.update(
        {
            "sudo": _sudo,
            "doas": _sudo,
            "env": _env,
            "nohup": _simple_wrapper(frozenset(), "without a command"),
            "time": _simple_wrapper(frozenset({"-f", "--format", "-o", "--output"}), "alone"),
            "nice": _simple_wrapper(frozenset({"-n", "--adjustment"}), "alone prints the niceness"),
            "ionice": _simple_wrapper(frozenset({"-c", "-n", "-p", "-P", "-u"}), "alone prints"),
            "stdbuf": _simple_wrapper(frozenset({"-i", "-o", "-e"}), "without a command"),
            "exec": _simple_wrapper(frozenset({"-a"}), "without a command only redirects"),
            "builtin": _simple_wrapper(frozenset(), "without a command"),
            "setsid": _simple_wrapper(frozenset(), "without a command"),
            "unbuffer": _simple_wrapper(frozenset(), "without a command"),
            "timeout": _timeout,
            "taskset": _taskset,
            "xargs": _xargs,
            "command": _command,
            "watch": _watch,
            "eval": _eval,
            "trap": _trap,
            "su": _su,
            "ssh": _ssh,
            "find": _find,
        }
    )
    return rules
