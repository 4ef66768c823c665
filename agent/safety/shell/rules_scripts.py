"""Rules for sed and awk: small languages whose scripts can write files or run commands.

Every script the command carries (each `-e`, or the first positional) is read with its language's
grammar (`sed_script`, `awk_program`): sed's `w`, `W`, `e` and `s///w|e`, awk's `system`, pipes,
`print > file` and `@` make it mutating; a script read from a file (`-f`) was not seen, so it is
mutating too.
"""

from __future__ import annotations

from agent.safety.shell.awk_program import awk_problem
from agent.safety.shell.options import grammar
from agent.safety.shell.outcomes import Outcome, ProgramRule, judge_options, mutating, read_only
from agent.safety.shell.sed_script import sed_script_writes
from agent.safety.shell.shell_words import RuntimeText

SED = grammar(
    "-n|--quiet|--silent --debug -e|--expression= -f|--file=:x -i|--in-place[=]:w "
    "-l|--line-length= --posix -E|-r|--regexp-extended -s|--separate -u|--unbuffered "
    "-z|--null-data --sandbox --follow-symlinks -b|--binary --help --version"
)
AWK = grammar(
    "-F|--field-separator= -v|--assign= -f|--file=:x -e|--source= -E|--exec=:x -i|--include=:x "
    "-l|--load=:x -b|--characters-as-bytes -c|--traditional -C|--copyright "
    "-d|--dump-variables[=]:w -D|--debug[=]:x -g|--gen-pot -h|--help -I|--trace -k|--csv "
    "-L|--lint[=] -M|--bignum -N|--use-lc-numeric -n|--non-decimal-data -o|--pretty-print[=]:w "
    "-O|--optimize -p|--profile[=]:w -P|--posix -r|--re-interval -s|--no-optimize -S|--sandbox "
    "-t|--lint-old -V|--version -W=",
    stop_at_positional=True,
)
AWK_W_HARMLESS = frozenset({"version", "interactive", "posix_space", "usage", "sprintf", "dump"})


def _sed(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(
        name, args, SED, why={"-i": "edits files in place", "-f": "runs a script file not read"}
    )
    if found:
        return found
    scripts = parsed.values("-e")
    if not scripts and parsed.positionals:
        scripts = [parsed.positionals[0]]
    for script in scripts:
        if isinstance(script, RuntimeText):
            return mutating(f"'sed' script is only known at run time ({script})")
        if problem := sed_script_writes(script):
            return mutating(f"'sed' script {problem}")
    return read_only("'sed' without -i only prints")


def awk_program_problem(program: str) -> str | None:
    if isinstance(program, RuntimeText):
        return f"is only known at run time ({program})"
    return awk_problem(program)


def _awk(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(
        name, args, AWK, why={"-f": "runs a program file that was not read"}
    )
    if found:
        return found
    modes = [w for w in parsed.values("-W") if w.split("=", 1)[0] not in AWK_W_HARMLESS]
    if modes:
        return mutating(f"'{name} -W {modes[0]}' is not known to be harmless")
    programs = parsed.values("-e")
    if not programs:
        if not parsed.rest:
            return mutating(f"'{name}' without a program")
        programs = [parsed.rest[0]]
    for program in programs:
        if problem := awk_program_problem(program):
            return mutating(f"'{name}' program {problem}")
    return read_only(f"'{name}' program only reads and prints")


def script_rules() -> dict[str, ProgramRule]:
    rules: dict[str, ProgramRule] = {"sed": _sed}
    rules.update(dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _awk))
    return rules
