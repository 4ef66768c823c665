"""What a per-command rule can say about one invocation, and the option reader rules share.

A rule either judges the invocation itself (`Verdict`) or says that it runs something else: an argv
(`RunsCommand`: sudo, xargs, docker exec), shell source (`RunsScript`: bash -c, ssh, watch) or
whatever arrives on its standard input (`RunsStdin`: `sh` fed by a pipe or a here-document). The
classifier follows those into the inner command.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tools.base import Risk


@dataclass(frozen=True)
class Verdict:
    risk: Risk
    reason: str


@dataclass(frozen=True)
class RunsCommand:
    argv: tuple[str, ...]
    via: str


@dataclass(frozen=True)
class RunsScript:
    source: str
    via: str


@dataclass(frozen=True)
class RunsStdin:
    via: str


Outcome = Verdict | RunsCommand | RunsScript | RunsStdin
Rule = Callable[[str, list[str]], list[Outcome]]


def word_set(text: str) -> frozenset[str]:
    """A set of names written as one whitespace-separated block (readable long allowlists)."""
    return frozenset(text.split())


def read_only(reason: str) -> list[Outcome]:
    return [Verdict(Risk.READ_ONLY, reason)]


def mutating(reason: str) -> list[Outcome]:
    return [Verdict(Risk.MUTATING, reason)]


def destructive(reason: str) -> list[Outcome]:
    return [Verdict(Risk.DESTRUCTIVE, reason)]


@dataclass(frozen=True)
class ParsedOptions:
    """Options seen (name → value or "") and the positional words, in order."""

    options: dict[str, str]
    positionals: list[str]
    rest_index: int

    def has(self, *names: str) -> bool:
        return any(name in self.options for name in names)


def read_options(
    args: Sequence[str],
    with_value: frozenset[str] = frozenset(),
    *,
    stop_at_positional: bool = False,
) -> ParsedOptions:
    """getopt-style reading: `-abc` clusters, `-oVALUE`, `--long=value`, `--` ends options.

    `with_value` names the options (`-o`, `--output`) that take a value. With `stop_at_positional`,
    reading stops at the first positional (`rest_index` points at it): wrappers like sudo use that
    to find the command they run.
    """
    options: dict[str, str] = {}
    positionals: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            index += 1
            if stop_at_positional:
                return ParsedOptions(options, positionals, index)
            positionals.extend(args[index:])
            return ParsedOptions(options, positionals, len(args))
        if arg.startswith("--") and len(arg) > 2:
            name, eq, value = arg.partition("=")
            if not eq and name in with_value and index + 1 < len(args):
                index += 1
                value = args[index]
            options[name] = value
        elif arg.startswith("-") and len(arg) > 1:
            index = _read_cluster(args, index, with_value, options)
        else:
            if stop_at_positional:
                return ParsedOptions(options, positionals, index)
            positionals.append(arg)
        index += 1
    return ParsedOptions(options, positionals, len(args))


def _read_cluster(
    args: Sequence[str], index: int, with_value: frozenset[str], options: dict[str, str]
) -> int:
    arg = args[index]
    if arg in with_value:
        options[arg] = args[index + 1] if index + 1 < len(args) else ""
        return index + 1
    for offset in range(1, len(arg)):
        name = "-" + arg[offset]
        if name in with_value:
            rest = arg[offset + 1 :]
            if rest:
                options[name] = rest
                return index
            options[name] = args[index + 1] if index + 1 < len(args) else ""
            return index + 1
        options[name] = ""
    return index
