"""A program's own option grammar, and a reader that follows it the way the program would.

Read-only means fully understood, so every program the classifier knows declares all of its
options: which take a value (attached `-oFILE`/`--out=FILE` or separate `-o FILE`), which take an
optional value (attached only: `--color[=WHEN]`), and what the risky ones do. Anything the
grammar does not know (an unknown or ambiguous option, a missing value, `=value` on a flag) is a
`problem`, and the classifier treats the command as mutating.

Spec strings list options separated by spaces; aliases are joined by `|`:
    `-v|--verbose`            a flag
    `-o|--output=`            takes a value (attached or the next word)
    `--color[=]`              takes an optional value, attached only
and an effect may follow after a colon:
    `:w`  writes the file named by its value (a flag: writes some file)
    `:x`  runs a program or code
    `:m`  changes the system
    `:d`  destroys something
Long options may be abbreviated to any unique prefix, as getopt_long and optparse allow; the
reader resolves them the same way, so `--out=/etc/x` is `--output`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from agent.safety.shell.shell_words import RuntimeText

Takes = Literal["none", "value", "optional"]
Effect = Literal["", "w", "x", "m", "d"]
_SPEC_TOKEN = re.compile(r"^(?P<names>[^=\[]+?)(?P<takes>=|\[=\])?(?::(?P<effect>[wxmd]))?$")


def word_set(text: str) -> frozenset[str]:
    """A set of names written as one whitespace-separated block (readable long allowlists)."""
    return frozenset(text.split())


@dataclass(frozen=True)
class Option:
    names: tuple[str, ...]
    takes: Takes = "none"
    effect: Effect = ""

    @property
    def name(self) -> str:
        """The longest spelling, for reasons a person reads (`--output` rather than `-o`)."""
        return max(self.names, key=len)


@dataclass(frozen=True)
class Grammar:
    """All options of one program (or one subcommand), read from a spec string.

    `numeric` accepts `-NUM` (head -5, grep -3); `whole_words` means options are whole words and
    never clusters (`lshw -short`, `find -name`); `stop_at_positional` ends option reading at the
    first positional word, as wrappers and POSIX utilities do.
    """

    short: dict[str, Option]
    long: dict[str, Option]
    numeric: bool = False
    whole_words: bool = False
    stop_at_positional: bool = False
    plus: bool = False  # `+x` words are options too (lsof +D, iostat +f)
    risky: bool = False  # some option writes, runs code or changes the system


def grammar(
    spec: str,
    *,
    numeric: bool = False,
    whole_words: bool = False,
    stop_at_positional: bool = False,
) -> Grammar:
    short: dict[str, Option] = {}
    long: dict[str, Option] = {}
    for token in spec.split():
        match = _SPEC_TOKEN.match(token)
        if match is None:
            raise ValueError(f"bad option spec {token!r}")
        takes: Takes = {"=": "value", "[=]": "optional", None: "none"}[match["takes"]]
        option = Option(tuple(match["names"].split("|")), takes, match["effect"] or "")  # type: ignore[arg-type]
        for name in option.names:
            single = len(name) == 2 and name[0] in "-+" and not whole_words
            (short if single else long)[name] = option
    options = (*short.values(), *long.values())
    return Grammar(
        short,
        long,
        numeric,
        whole_words,
        stop_at_positional,
        plus=any(name.startswith("+") for name in short),
        risky=any(option.effect for option in options),
    )


@dataclass
class Parsed:
    """What the reader found: options in order (with values), positionals, and any problem."""

    options: list[tuple[Option, str | None]] = field(default_factory=list)
    positionals: list[str] = field(default_factory=list)
    rest: list[str] = field(default_factory=list)
    dynamic: list[str] = field(default_factory=list)
    problem: str | None = None
    unknown: str | None = None  # the word holding an option the grammar does not know

    def has(self, *names: str) -> bool:
        return any(name in option.names for option, _ in self.options for name in names)

    def value(self, *names: str) -> str | None:
        """The last value given to any of `names` ("" for a flag), or None when absent."""
        found: str | None = None
        for option, value in self.options:
            if any(name in option.names for name in names):
                found = "" if value is None else value
        return found

    def values(self, *names: str) -> list[str]:
        return [
            value or ""
            for option, value in self.options
            if any(name in option.names for name in names)
        ]

    def risky(self) -> list[tuple[Option, str | None]]:
        return [(option, value) for option, value in self.options if option.effect]


def read_args(args: Sequence[str], spec: Grammar) -> Parsed:
    """Read `args` by `spec`; stops at the first problem (then `problem` says what it was)."""
    parsed = Parsed()
    index = 0
    while index < len(args):
        arg = args[index]
        if isinstance(arg, RuntimeText):
            parsed.dynamic.append(arg)
            if _positional(parsed, spec, args, index):
                return parsed
        elif arg == "--":
            parsed.positionals.extend(args[index + 1 :])
            if spec.stop_at_positional:
                parsed.rest = list(args[index + 1 :])
            return parsed
        elif spec.numeric and re.fullmatch(r"-\d+", arg):
            parsed.options.append((Option((arg,)), arg[1:]))
        elif arg.startswith("--") or (spec.whole_words and arg.startswith("-") and len(arg) > 1):
            index = _long(parsed, spec, args, index)
        elif len(arg) > 1 and (arg[0] == "-" or (arg[0] == "+" and spec.plus)):
            index = _cluster(parsed, spec, args, index)
        elif _positional(parsed, spec, args, index):
            return parsed
        if parsed.problem:
            return parsed
        index += 1
    return parsed


def _positional(parsed: Parsed, spec: Grammar, args: Sequence[str], index: int) -> bool:
    """Record a positional; True when reading stops here (stop_at_positional)."""
    if spec.stop_at_positional:
        parsed.rest = list(args[index:])
        parsed.positionals.extend(args[index:])
        return True
    parsed.positionals.append(args[index])
    return False


def _long(parsed: Parsed, spec: Grammar, args: Sequence[str], index: int) -> int:
    name, eq, attached = args[index].partition("=")
    option = _lookup_long(spec, name)
    if option is None:
        parsed.problem = f"option {name} is not known to be harmless"
        parsed.unknown = args[index]
        return index
    if option.takes == "none":
        if eq:
            parsed.problem = f"option {name} takes no value"
        parsed.options.append((option, None))
        return index
    if option.takes == "optional" or eq:
        parsed.options.append((option, attached if eq else None))
        return index
    if index + 1 >= len(args):
        parsed.problem = f"option {name} needs a value"
        return index
    parsed.options.append((option, args[index + 1]))
    return index + 1


def _lookup_long(spec: Grammar, name: str) -> Option | None:
    if name in spec.long:
        return spec.long[name]
    if spec.whole_words or not name.startswith("--"):
        return None
    candidates = {option for key, option in spec.long.items() if key.startswith(name)}
    return candidates.pop() if len(candidates) == 1 else None


def _cluster(parsed: Parsed, spec: Grammar, args: Sequence[str], index: int) -> int:
    arg = args[index]
    for offset in range(1, len(arg)):
        option = spec.short.get(arg[0] + arg[offset])
        if option is None:
            parsed.problem = f"option -{arg[offset]} is not known to be harmless"
            parsed.unknown = args[index]
            return index
        rest = arg[offset + 1 :]
        if option.takes == "none":
            parsed.options.append((option, None))
            continue
        if rest or option.takes == "optional":
            parsed.options.append((option, rest or None))
            return index
        if index + 1 >= len(args):
            parsed.problem = f"option {arg[0]}{arg[offset]} needs a value"
            return index
        parsed.options.append((option, args[index + 1]))
        return index + 1
    return index
