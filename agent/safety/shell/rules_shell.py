"""Rules for shells and their builtins: `sh -c`, `eval`, `source`, `read`, `export`, `[[ … ]]`.

A shell runs whatever source it is given (`-c STRING`, a here-document, a pipe); the classifier
judges that source like any other line. Builtins that only set variables are read-only unless the
variable steers programs (`export PATH=…`, `read LD_PRELOAD`, `declare -n`), and ones that run
code later or elsewhere (`trap`, `source`, `alias`, `enable -f`, `compgen -C`) are not.
"""

from __future__ import annotations

from agent.safety.shell.environment import steering_reason
from agent.safety.shell.options import grammar
from agent.safety.shell.outcomes import (
    Outcome,
    ProgramRule,
    RunsCommand,
    RunsScript,
    RunsStdin,
    judge_options,
    mutating,
    read_only,
)
from agent.safety.shell.shell_words import RuntimeText

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "rbash"})
SHELL = grammar(
    "-c -s -e -u -x -v -n -f -a -b -h -k -m -p -t -B -C -E -H -P -T -i:m -l -r "
    "-o= +o= -O= +O= +e +u +x +v +a +f --login --norc --noprofile --posix --restricted "
    "--noediting --verbose --debugger --dump-strings --dump-po-strings --pretty-print "
    "--rcfile=:x --init-file=:x --help --version",
    stop_at_positional=True,
)
READ = grammar("-a= -d= -e -E -i= -n= -N= -p= -r -s -t= -u=", stop_at_positional=True)
DECLARE = grammar("-a -A -f -F -g -i -I -l -n:m -p -r -t -u -x +a +A +i +l +n +r +t +u +x "
                  "+f +F +g +I +p", stop_at_positional=True)  # fmt: skip
CD = grammar("-L -P -e -@")
HASH = grammar("-r -d -l -t -p=:m")
SHOPT = grammar("-p -q -o -s:m -u:m")
ONLY_SHELL_STATE = {
    "cd": "changes the shell's folder", "pushd": "changes the shell's folder",
    "popd": "changes the shell's folder", "dirs": "lists folders", "unset": "unsets variables",
    "shift": "shifts arguments", "wait": "waits for jobs", "jobs": "lists jobs",
    "exit": "ends the shell", "return": "returns from the shell", "type": "looks names up",
    "which": "looks names up", "whereis": "looks names up", "times": "prints times",
    "umask": "sets the file creation mask", "getopts": "reads options", "caller": "prints",
    "history": "lists commands", "help": "prints help", "logout": "ends the shell",
    "disown": "forgets jobs", "set": "sets shell options", "ulimit": "sets shell limits",
}  # fmt: skip
ALWAYS_MUTATING = {
    "source": "runs a script file in this shell", ".": "runs a script file in this shell",
    "alias": "defines an alias that changes what later commands run",
    "enable": "loads or turns shell builtins on and off", "bind": "binds keys to commands",
    "fc": "re-runs commands from history", "let": "evaluates arithmetic that can run commands",
    "complete": "defines completions that run commands", "coproc": "starts a coprocess",
    "mapfile": "reads lines into an array (with a callback that runs code)",
    "readarray": "reads lines into an array (with a callback that runs code)",
}  # fmt: skip


def _shell(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(
        name,
        args,
        SHELL,
        why={"-i": "starts an interactive shell", "--rcfile": "runs a startup file"},
    )
    if found:
        return found
    if parsed.has("--version", "--help") and not parsed.rest:
        return read_only(f"'{name} --version' prints a version")
    if parsed.has("-n"):
        return read_only(f"'{name} -n' only checks the syntax")
    if parsed.has("-c"):
        if not parsed.rest:
            return mutating(f"'{name} -c' without a command string")
        source = parsed.rest[0]
        if isinstance(source, RuntimeText):
            return mutating(f"'{name} -c' runs a script only known at run time")
        return [RunsScript(source, f"{name} -c")]
    if parsed.rest and not parsed.has("-s"):
        return mutating(f"'{name} {parsed.rest[0]}' runs a script whose contents were not read")
    return [RunsStdin(name)]


def _eval(name: str, args: list[str]) -> list[Outcome]:
    return [RunsScript(" ".join(args), "eval")] if args else read_only("'eval' of nothing")


def _trap(name: str, args: list[str]) -> list[Outcome]:
    if len(args) >= 2 and args[0] not in ("-", "-p", "-l", ""):
        return [RunsScript(args[0], "trap")]
    return read_only("'trap' only lists or resets traps")


def _command(name: str, args: list[str]) -> list[Outcome]:
    if args and args[0] in ("-v", "-V"):
        return read_only(f"'{name} -v' only looks a name up")
    rest = args[1:] if args[:1] == ["-p"] else args
    if not rest:
        return read_only(f"'{name}' without a command does nothing")
    return [RunsCommand(tuple(rest), name)]


def _sets_variables(names: list[str], label: str) -> list[Outcome]:
    for name in names:
        if isinstance(name, RuntimeText):
            return mutating(f"'{label}' sets a variable whose name is only known at run time")
        if reason := steering_reason(name.split("=", 1)[0].split("[", 1)[0].rstrip("+")):
            return mutating(f"'{label} {name.split('=', 1)[0]}': {reason}")
    return read_only(f"'{label}' only sets shell variables")


def _read(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, READ)
    if found:
        return found
    targets = parsed.rest or ["REPLY"]
    if parsed.value("-a"):
        targets = [*targets, parsed.value("-a") or ""]
    return _sets_variables(targets, name)


def _declare(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(
        name, args, DECLARE, why={"-n": "makes a name refer to another variable"}
    )
    if found:
        return found
    return _sets_variables(parsed.rest, name)


def _builtin_state(name: str, args: list[str]) -> list[Outcome]:
    if name == "hash":
        _, found = judge_options(name, args, HASH, why={"-p": "sets the path a name runs"})
        return found or read_only("'hash' only lists or forgets remembered paths")
    if name == "shopt":
        _, found = judge_options(
            name,
            args,
            SHOPT,
            why={"-s": "changes shell behaviour", "-u": "changes shell behaviour"},
        )
        return found or read_only("'shopt' only prints shell options")
    if name in ("cd", "pushd"):
        _, found = judge_options(name, args, CD)
        if found:
            return found
    if name == "compgen" and any(a.startswith(("-C", "-F")) for a in args):
        return mutating("'compgen -C/-F' runs a command or function")
    return read_only(f"'{name}' {ONLY_SHELL_STATE.get(name, 'only prints')}")


def _double_bracket(name: str, args: list[str]) -> list[Outcome]:
    """`[[ $x -eq 1 ]]` evaluates `$x` as arithmetic, which runs `a[$(cmd)]` hidden in it."""
    arithmetic = ("-eq", "-ne", "-lt", "-le", "-gt", "-ge")
    for index, word in enumerate(args):
        if word in arithmetic:
            operands = args[index - 1 : index] + args[index + 1 : index + 2]
            if any(isinstance(o, RuntimeText) for o in operands):
                return mutating(f"'[[ … {word} … ]]' evaluates a value only known at run time")
        if word == "-v" and index + 1 < len(args) and "[" in args[index + 1]:
            return mutating("'[[ -v NAME[…] ]]' evaluates an array subscript")
    return read_only("'[[' only tests")


def _always_mutating(name: str, args: list[str]) -> list[Outcome]:
    return mutating(f"'{name}' {ALWAYS_MUTATING[name]}")


def shell_rules() -> dict[str, ProgramRule]:
    rules: dict[str, ProgramRule] = dict.fromkeys(SHELLS, _shell)
    rules.update(dict.fromkeys(ALWAYS_MUTATING, _always_mutating))
    rules.update(dict.fromkeys((*ONLY_SHELL_STATE, "hash", "shopt", "compgen"), _builtin_state))
    rules.update(dict.fromkeys(("declare", "typeset", "local", "export", "readonly"), _declare))
    rules.update(
        {"eval": _eval, "trap": _trap, "command": _command, "read": _read,
         "[[": _double_bracket}
    )  # fmt: skip
    return rules
