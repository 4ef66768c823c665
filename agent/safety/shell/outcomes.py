"""What a per-program rule can say about one invocation, and how option effects become verdicts.

A `ProgramRule` either judges the invocation itself (`Verdict`) or says that it runs something
else: an argv (`RunsCommand`: sudo, xargs, docker exec), shell source (`RunsScript`: bash -c, ssh,
watch) or whatever arrives on its standard input (`RunsStdin`: `sh` fed by a pipe or a
here-document). The classifier follows those into the inner command.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from agent.safety.shell.options import Grammar, Option, Parsed, read_args
from agent.safety.shell.paths import is_harmless_sink, is_system_path
from agent.safety.shell.shell_words import RuntimeText
from tools.risk.assessment import Risk


@dataclass(frozen=True)
class Verdict:
    risk: Risk
    reason: str


@dataclass(frozen=True)
class UnknownOption(Verdict):
    """An option the grammar does not know, in the word `word`: the call asks, and the verb is
    still judged without it (an unknown option never lowers what the verb does)."""

    word: str = ""


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
ProgramRule = Callable[[str, list[str]], list[Outcome]]
ONLY_READS = "only reads or prints"
EFFECT_WORDS = {"x": "runs a program or code", "m": "changes the system", "d": "destroys data"}


def read_only(reason: str) -> list[Outcome]:
    return [Verdict(Risk.READ_ONLY, reason)]


def mutating(reason: str) -> list[Outcome]:
    return [Verdict(Risk.MUTATING, reason)]


def destructive(reason: str) -> list[Outcome]:
    return [Verdict(Risk.DESTRUCTIVE, reason)]


def written_file(label: str, path: str | None) -> list[Outcome]:
    """`label` writes `path`: nothing for /dev/null, destructive for system paths."""
    if path is None or path == "":
        return mutating(f"'{label}' writes a file")
    if is_harmless_sink(path):
        return []
    if isinstance(path, RuntimeText):
        return mutating(f"'{label}' writes a file only known at run time ({path})")
    if is_system_path(path):
        return destructive(f"'{label}' writes into system path {path}")
    return mutating(f"'{label}' writes {path}")


def not_understood(name: str, parsed: Parsed, spec: Grammar) -> list[Outcome]:
    """Mutating when the grammar could not follow the words, or an expansion could be an option."""
    if parsed.problem and parsed.unknown is not None:
        return [UnknownOption(Risk.MUTATING, f"'{name}': {parsed.problem}", parsed.unknown)]
    if parsed.problem:
        return mutating(f"'{name}': {parsed.problem}")
    if parsed.dynamic and spec.risky:
        return mutating(
            f"'{name}' gets a word only known at run time ({parsed.dynamic[0]}), which could "
            "turn into one of its risky options"
        )
    return []


def option_effects(
    name: str, parsed: Parsed, why: Mapping[str, str] | None = None
) -> list[Outcome]:
    """The verdicts of the risky options that were used (`why` gives a clearer reason)."""
    found: list[Outcome] = []
    for option, value in parsed.risky():
        found.extend(_effect(name, option, value, why or {}))
    return found


def _effect(name: str, option: Option, value: str | None, why: Mapping[str, str]) -> list[Outcome]:
    label = f"{name} {option.name}"
    reason = next((why[n] for n in option.names if n in why), None)
    if option.effect == "w":
        found = written_file(label, value)
        if reason and found and found[0].risk == Risk.MUTATING:  # type: ignore[union-attr]
            return mutating(f"'{label}' {reason}")
        return found
    words = reason or EFFECT_WORDS[option.effect]
    if option.effect == "d":
        return destructive(f"'{label}' {words}")
    return mutating(f"'{label}' {words}")


def understood(name: str, args: Sequence[str], spec: Grammar) -> tuple[Parsed, list[Outcome]]:
    """Read `args` by `spec`; the outcomes say only what could not be understood."""
    parsed = read_args(args, spec)
    return parsed, not_understood(name, parsed, spec)


def judge_options(
    name: str,
    args: Sequence[str],
    spec: Grammar,
    *,
    why: Mapping[str, str] | None = None,
) -> tuple[Parsed, list[Outcome]]:
    """Read `args` by `spec`; the outcomes are empty when every option used is harmless."""
    parsed = read_args(args, spec)
    problems = not_understood(name, parsed, spec)
    if problems:
        return parsed, problems
    return parsed, option_effects(name, parsed, why)


def reader(spec: Grammar, *, why: Mapping[str, str] | None = None, reads: str = "") -> ProgramRule:
    """A program that only reads unless one of its risky options is used."""

    def rule(name: str, args: list[str]) -> list[Outcome]:
        _, found = judge_options(name, args, spec, why=why)
        return found or read_only(f"'{name}' {reads or ONLY_READS}")

    return rule
