"""Rules for shells and their builtins: `sh -c`, `eval`, `source`, `read`, `export`, `[[ … ]]`.

A shell runs whatever source it is given (`-c STRING`, a here-document, a pipe); the classifier
judges that source like any other line. Builtins are read-only only in allow-listed forms: one
that sets a variable (`read`, `declare`, `getopts`, `export`) only for an allowed name (see
`environment`) with a literal subscript; `[[ … -eq … ]]` only on literal integers (bash evaluates
names there as arithmetic); `history`, `jobs`, `kill`, `set` and `compgen` only with the options
that print. Ones that run code later or elsewhere (`trap`, `source`, `alias`, `jobs -x`,
`compgen -W '$(…)'`) are judged for what they run.
"""

from __future__ import annotations

import re

from agent.safety.shell.environment import variable_reason
from agent.safety.shell.expansions import subscript_problem
from agent.safety.shell.options import grammar, word_set
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
DECLARE = grammar("-a -A -f -F -g -i:m -I -l -n:m -p -r -t -u -x +a +A +i +l +n +r +t +u +x "
                  "+f +F +g +I +p", stop_at_positional=True)  # fmt: skip
COMPGEN = grammar("-a -b -c -d -e -f -g -j -k -s -u -v -I -o= -A= -G= -W= -P= -S= -X= -C=:x "
                  "-F=:x -V=", stop_at_positional=True)  # fmt: skip
JOBS = grammar("-l -n -p -r -s -x", stop_at_positional=True)
SET_FLAGS = frozenset("euxfvCEhBH")
SET_OPTIONS = word_set(
    "errexit nounset xtrace noglob noclobber verbose errtrace pipefail hashall braceexpand"
)
NOT_HARMLESS = "not a shell option known to be harmless"
INTEGER_EXPANSION_RE = re.compile(r"\$[?#$!]|\$\{#[A-Za-z_][A-Za-z0-9_]*(\[[@*]\])?\}")
UNSET = grammar("-f -v -n", stop_at_positional=True)
WAIT = grammar("-n -f -p=", stop_at_positional=True)
CD = grammar("-L -P -e -@")
HASH = grammar("-r -d -l -t -p=:m")
SHOPT = grammar("-p -q -o -s:m -u:m")
ONLY_SHELL_STATE = {
    "cd": "changes the shell's folder", "pushd": "changes the shell's folder",
    "popd": "changes the shell's folder", "dirs": "lists folders", "shift": "shifts arguments",
    "exit": "ends the shell", "return": "returns from the shell", "type": "looks names up",
    "which": "looks names up", "whereis": "looks names up", "times": "prints times",
    "umask": "sets the file creation mask", "caller": "prints", "help": "prints help",
    "logout": "ends the shell", "disown": "forgets jobs", "ulimit": "sets shell limits",
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


def sets_variables(names: list[str], label: str, *, exported: bool = False) -> list[Outcome]:
    """`NAME`, `NAME=value` or `NAME[sub]=value` words a builtin assigns: each name allowed?"""
    for word in names:
        if isinstance(word, RuntimeText):
            return mutating(f"'{label}' sets a variable whose name is only known at run time")
        target, eq, value = word.partition("=")
        if problem := subscript_problem(target.rstrip("+")):
            return mutating(f"'{label}': {problem}")
        variable = target.split("[", 1)[0].rstrip("+")
        if reason := variable_reason(variable, value if eq else None, exported=exported):
            return mutating(f"'{label} {variable}': {reason}")
    return read_only(f"'{label}' only sets shell variables")


def _read(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, READ)
    if found:
        return found
    targets = parsed.rest or ["REPLY"]
    if parsed.value("-a"):
        targets = [*targets, parsed.value("-a") or ""]
    return sets_variables(targets, name)


def _declare(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(
        name,
        args,
        DECLARE,
        why={"-n": "makes a name refer to another variable",
             "-i": "makes every assignment evaluate arithmetic, which can run commands"},
    )  # fmt: skip
    if found:
        return found
    exported = name == "export" or (parsed.has("-x") and not parsed.has("+x"))
    return sets_variables(parsed.rest, name, exported=exported)


def _getopts(name: str, args: list[str]) -> list[Outcome]:
    if len(args) < 2:
        return mutating("'getopts' without an option string and a name")
    return sets_variables([args[1]], name)


def _unset(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, UNSET)
    if found:
        return found
    if parsed.has("-f"):
        return read_only("'unset -f' forgets functions")
    for target in parsed.positionals:  # a variable back at its default; a subscript is code
        if isinstance(target, RuntimeText) or (problem := subscript_problem(target)):
            return mutating(f"'unset {target}': {problem or 'a name only known at run time'}")
    return read_only("'unset' unsets variables")


def _wait(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, WAIT)
    if found:
        return found
    if parsed.value("-p"):
        return sets_variables([parsed.value("-p") or ""], "wait -p")
    return read_only("'wait' waits for jobs")


def _history(name: str, args: list[str]) -> list[Outcome]:
    if len(args) > 1 or (args and not args[0].isdigit()):
        shown = args[0] if args[0].startswith("-") else " ".join(args)
        return mutating(f"'history {shown}' changes, stores or expands history")
    return read_only("'history' lists commands")


def _jobs(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, JOBS)
    if found:
        return found
    if parsed.has("-x"):
        if not parsed.rest:
            return mutating("'jobs -x' without a command")
        return [RunsCommand(tuple(parsed.rest), "jobs -x")]
    return read_only("'jobs' lists jobs")


def _set(name: str, args: list[str]) -> list[Outcome]:
    index = 0
    while index < len(args):
        word = args[index]
        if word in ("--", "-") or isinstance(word, RuntimeText) or word[:1] not in "-+":
            return read_only("'set' sets the positional parameters")
        flags = word[1:]
        if flags.endswith("o"):  # `-o NAME`, also at the end of a cluster (`-euo pipefail`)
            option = args[index + 1] if index + 1 < len(args) else ""
            if option and option not in SET_OPTIONS:
                return mutating(f"'set {word[0]}o {option}': {NOT_HARMLESS}")
            flags, index = flags[:-1], index + 1
        if unknown := [flag for flag in flags if flag not in SET_FLAGS]:
            return mutating(f"'set {word[0]}{unknown[0]}': {NOT_HARMLESS}")
        index += 1
    return read_only("'set' sets shell options")


def _compgen(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(
        name, args, COMPGEN, why={"-C": "runs a command", "-F": "runs a shell function"}
    )
    if found:
        return found
    words = parsed.value("-W") or ""
    if isinstance(words, RuntimeText) or any(mark in words for mark in ("$", "`", "<(")):
        return mutating("'compgen -W' expands its word list, which runs what it holds")
    if parsed.value("-V"):
        return sets_variables([parsed.value("-V") or ""], "compgen -V")
    return read_only("'compgen' only prints")


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
    return read_only(f"'{name}' {ONLY_SHELL_STATE.get(name, 'only prints')}")


def _double_bracket(name: str, args: list[str]) -> list[Outcome]:
    """`[[ x -eq 1 ]]` evaluates `x` as arithmetic, which runs `a[$(cmd)]` hidden in its value."""
    arithmetic = ("-eq", "-ne", "-lt", "-le", "-gt", "-ge")
    for index, word in enumerate(args):
        if word in arithmetic:
            operands = args[index - 1 : index] + args[index + 1 : index + 2]
            if not all(_integer_operand(o) for o in operands):
                return mutating(f"'[[ … {word} … ]]' evaluates its operands as arithmetic")
        if word == "-v" and index + 1 < len(args) and "[" in args[index + 1]:
            return mutating("'[[ -v NAME[…] ]]' evaluates an array subscript")
    return read_only("'[[' only tests")


def _integer_operand(word: str) -> bool:
    """A literal integer, or an expansion that is always one (`$?`, `$#`, `${#name}`)."""
    if isinstance(word, RuntimeText):
        return INTEGER_EXPANSION_RE.fullmatch(word) is not None
    return word.strip().lstrip("+-").isdigit()


def _always_mutating(name: str, args: list[str]) -> list[Outcome]:
    return mutating(f"'{name}' {ALWAYS_MUTATING[name]}")


def shell_rules() -> dict[str, ProgramRule]:
    rules: dict[str, ProgramRule] = dict.fromkeys(SHELLS, _shell)
    rules.update(dict.fromkeys(ALWAYS_MUTATING, _always_mutating))
    rules.update(dict.fromkeys((*ONLY_SHELL_STATE, "hash", "shopt"), _builtin_state))
    rules.update(dict.fromkeys(("declare", "typeset", "local", "export", "readonly"), _declare))
    rules.update(
        {"eval": _eval, "trap": _trap, "command": _command, "read": _read,
         "[[": _double_bracket, "getopts": _getopts, "unset": _unset, "wait": _wait,
         "history": _history, "jobs": _jobs, "set": _set, "compgen": _compgen}
    )  # fmt: skip
    return rules
