"""Generators of command forms, one per class of the gate's allow-lists (issue 25).

Each generator crosses a few independent parts (a construct, a spelling, a placement, a payload)
with itertools, so a class is tested as the set of its forms rather than as a list of examples.
The test modules beside this one feed these forms to the classifier and to `scout policy`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

STEERING_NAMES = ("PATH", "IFS", "BASH_ENV", "ENV", "LD_PRELOAD", "PS4", "PROMPT_COMMAND",
                  "HOME", "SHELLOPTS", "TAR_OPTIONS", "KUBECTL_EXTERNAL_DIFF", "HF_ENDPOINT",
                  "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "DBUS_SESSION_BUS_ADDRESS",
                  "DOCKER_HOST", "SGLANG_CONFIG", "GIT_SSH_COMMAND")  # fmt: skip
# Exported, any name off the inert list asks, however ordinary it looks.
EXPORTED_NAMES = (*STEERING_NAMES, "FOO", "X", "VLLM_CONFIG_ROOT", "NCCL_DEBUG_FILE")
INERT_NAMES = ("LANG", "LC_ALL", "LC_NUMERIC", "TZ", "TERM", "COLUMNS", "NO_COLOR")
READS = ("ls /tmp", "nvidia-smi -L", "cat /etc/os-release", "systemctl status docker",
         "docker ps", "kubectl get pods", "tar tf a.tar", "hf cache scan")  # fmt: skip
EXPRESSIONS = ("i", "x+1", "$i", "a[$(id)]", "n*2", "${#x}+i")


def arithmetic_forms() -> Iterator[str]:
    """Every place bash evaluates arithmetic, holding a name (whose value can run code)."""
    contexts = ("echo $(({e}))", "echo $[{e}]", "echo ${{a[{e}]}}", 'echo "${{a[{e}]}}"',
                "[[ {e} -eq 1 ]]", "[[ 1 -lt {e} ]]", "echo ${{x:{e}}}", "echo ${{x:1:{e}}}",
                "declare -i n={e}",
                "read 'a[{e}]'", "printf -v 'a[{e}]' x", "unset 'a[{e}]'", "declare 'a[{e}]=1'",
                "cat <<EOF\n$(({e}))\nEOF")  # fmt: skip
    for context, expression in itertools.product(contexts, EXPRESSIONS):
        yield context.format(e=expression)


def literal_arithmetic_forms() -> Iterator[str]:
    contexts = ("echo $(({e}))", "echo ${{a[{e}]}}", "[[ {e} -eq 1 ]]", "echo ${{x:{e}}}")
    for context, expression in itertools.product(contexts, ("1", "0", "12")):
        yield context.format(e=expression)
    for operand, test in itertools.product(("$?", "$#", "${#x}", "${#a[@]}"), ("-eq", "-gt")):
        yield f"[[ {operand} {test} 0 ]]"


def indirection_forms() -> Iterator[str]:
    expansions = ("${!x}", "${x@P}", "${!x@P}", "${a[@]@P}", "${!x:-y}", "${x:-${!y}}")
    wrappers = ("echo {x}", 'printf "%s" "{x}"', "ls {x}", "cat <<EOF\n{x}\nEOF", "X={x}; ls")
    for wrapper, expansion in itertools.product(wrappers, expansions):
        yield wrapper.format(x=expansion)


def builtin_forms() -> Iterator[str]:
    """Builtins that write, store, run or signal, in their every option spelling."""
    for payload in ("'$(id)'", '"`id`"', "'$(touch /tmp/x)' y", "'<(id)'"):
        yield f"compgen -W {payload}"
    for option, argument in itertools.product("wsarndpc", ("", " /tmp/h", " rm -rf /x")):
        yield f"history -{option}{argument}"
    for inner in ("rm -rf /tmp/x", "touch /tmp/x", "reboot"):
        yield f"jobs -x {inner}"
    signals = ("-0", "-l", "-s HUP", "-9", "-SIGKILL", "-n 9", "-TERM")
    for first, second in itertools.product(("-0", "-l", "-L"), signals):
        yield f"kill {first} {second} 123"
    for option in ("-a", "-k", "-T", "-o functrace", "-o allexport", "-o emacs -o history"):
        yield f"set {option}; ls"


def assigning_forms() -> Iterator[str]:
    """Every way a builtin sets a steering name, or the environment any non-inert name."""
    in_shell = ("for {n} in /tmp/x; do {r}; done", "read {n}; {r}", "getopts ab {n}; {r}",
                "declare {n}=/tmp/x; {r}", "printf -v {n} x; {r}", "readonly {n}=/tmp/x; {r}",
                "read -a {n}; {r}", "echo ${{{n}:=/tmp/x}}; {r}", "{n}=/tmp/x; {r}")  # fmt: skip
    exported = ("export {n}=/tmp/x; {r}", "typeset -x {n}=/tmp/x; {r}", "{n}=/tmp/x {r}",
                "env {n}=/tmp/x {r}", "env -u HOME {n}=/tmp/x {r}", "sudo {n}=/tmp/x {r}",
                "{n}=http://10.9.9.9:3128 {r}")  # fmt: skip
    for form, name, read in itertools.product(in_shell, STEERING_NAMES, READS[:3]):
        yield form.format(n=name, r=read)
    for form, name, read in itertools.product(exported, EXPORTED_NAMES, READS):
        yield form.format(n=name, r=read)


def _ansi_c(text: str, style: str) -> str:
    if style == "hex":
        return "$'" + "".join(f"\\x{ord(c):02x}" for c in text) + "'"
    if style == "octal":
        return "$'" + "".join(f"\\{ord(c):03o}" for c in text) + "'"
    if style == "u":
        return "$'" + "".join(f"\\u{ord(c):04x}" for c in text) + "'"
    return "$'" + "".join(f"\\U{ord(c):08x}" for c in text) + "'"


def ansi_c_pairs(commands: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """(plain, encoded) pairs: each word of `commands` written in each ANSI-C escape style."""
    for command, style in itertools.product(commands, ("hex", "octal", "u", "U")):
        words = command.split()
        for index in range(len(words)):
            encoded = [*words[:index], _ansi_c(words[index], style), *words[index + 1 :]]
            yield command, " ".join(encoded)


def brace_pairs(commands: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """(plain, braced) pairs: the words of `commands` as one brace expansion, members quoted."""
    quotes = ("{}", "'{}'", '"{}"', "\\{}")
    for command in commands:
        words = command.split()
        for quote in quotes:
            members = [quote.format(w) if quote != "\\{}" else "\\" + w for w in words]
            yield command, "{" + ",".join(members) + "}"


def path_pairs(commands: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """(plain, spelled) pairs: the program named by a system path with `//`, `.` and `..`."""
    spellings = ("/usr/bin/{}", "/usr//bin/{}", "/usr/bin/../bin/{}", "/bin/./{}", "//usr/bin/{}",
                 "/usr/sbin/../bin/{}")  # fmt: skip
    for command, spelling in itertools.product(commands, spellings):
        program, _, rest = command.partition(" ")
        yield command, f"{spelling.format(program)} {rest}"
