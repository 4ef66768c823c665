"""A rule's `command=` matched against the parsed command, never against its text.

A pattern is one simple command: a literal program, then words matched one by one. An allow
rule never widens:
- each pattern word matches exactly one word of the command, so the counts must be equal (`*`
  never adds an argument); inside a word a wildcard never matches blanks or command-language
  structure (`word_globs`);
- a wildcard never stands for a program or a subcommand: the command's program and subcommands
  (`command_path`, or for a program it does not know, its first bare word), and those of every
  command it runs in turn (`sudo X`, `docker exec c X`, `timeout 5 X`), must be written out;
  where a word is run as a script (`sh -c`, tmux's shell command), the rule must be exact;
- a wildcard never matches an option unless the pattern word starts with `-` (`kubectl delete
  pod *` never covers `--all`);
- the command is plain: no assignment, no substitution, no redirection beyond reading or
  /dev/null; a line with several commands is covered only when each of them is.
Deny and ask rules are the careful direction (`reaches`): there a final `*` covers any further
arguments and a wildcard matches anything.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import dataclass

from agent.safety.shell.classifier import commands_run
from agent.safety.shell.command_path import command_path
from agent.safety.shell.paths import is_harmless_sink
from agent.safety.shell.shell_parse import Command, ShellSyntaxError, parse_script
from agent.safety.shell.shell_words import RuntimeText
from agent.safety.word_globs import has_wildcard, matches

GLOB_CHARS = re.compile(r"([*?\[])")
HARMLESS_REDIRECTS = frozenset({"<", "<<<"})
BARE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


class PatternError(ValueError):
    """A command pattern that is not one plain simple command."""


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command of a line: its words, and whether it is plain enough to be covered."""

    argv: tuple[str, ...]
    plain: bool


@dataclass(frozen=True)
class CommandPattern:
    words: tuple[str, ...]
    any_rest: bool

    @classmethod
    def parse(cls, text: str) -> CommandPattern:
        try:
            script = parse_script(text)
        except ShellSyntaxError as exc:
            raise PatternError(f"command pattern {text!r} does not parse: {exc}") from None
        if len(script.commands) != 1:
            raise PatternError(
                f"command pattern {text!r} must be one simple command (no ;, |, && or newlines)"
            )
        command = script.commands[0]
        if command.assignments or command.redirects or command.substitutions:
            raise PatternError(
                f"command pattern {text!r} may not set variables, redirect or substitute"
            )
        words = tuple(w.text for w in command.words)
        if not words or has_wildcard(words[0]):
            raise PatternError(f"command pattern {text!r} must start with a literal program name")
        return cls(words, words[-1].endswith("*") and not words[-1].endswith("[*]"))

    def covers(self, command: SimpleCommand) -> bool:
        """The allow direction: this shape of command, one word for each pattern word."""
        argv = command.argv
        if not command.plain or len(argv) != len(self.words):
            return False
        if any(isinstance(word, RuntimeText) for word in argv):
            return False
        wild = {i for i, pattern in enumerate(self.words) if has_wildcard(pattern)}
        for i, (word, pattern) in enumerate(zip(argv, self.words, strict=True)):
            if not matches(pattern, word):
                return False
            if i in wild and word.startswith("-") and not pattern.startswith("-"):
                return False
        return not wild or not wild & _fixed_words(argv)

    def reaches(self, argv: list[str]) -> bool:
        """The careful direction (deny, ask): a final `*` covers any further arguments."""
        words = self.words[:-1] if self.words[-1] == "*" else self.words
        if not argv or argv[0] != words[0] or len(argv) < len(words):
            return False
        if len(argv) > len(words) and not self.any_rest:
            return False
        return all(fnmatch.fnmatchcase(w, p) for w, p in zip(argv, words, strict=False))


def _fixed_words(argv: tuple[str, ...]) -> set[int]:
    """Positions a wildcard may never stand at: programs and subcommands, the command's own and
    those of each command it runs; every position when one of its words is run as a script."""
    fixed = _path_positions(argv, 0)
    for inner in commands_run(shlex.join(argv))[1:]:
        offset = len(argv) - len(inner)
        if offset <= 0 or tuple(argv[offset:]) != tuple(inner):
            return set(range(len(argv)))
        fixed |= _path_positions(tuple(inner), offset)
    return fixed


def _path_positions(argv: tuple[str, ...], offset: int) -> set[int]:
    path = command_path(list(argv))
    positions = {offset}
    index = 0
    for word in path[1:]:
        index = next((i for i in range(index + 1, len(argv)) if argv[i] == word), index)
        positions.add(offset + index)
    if len(path) == 1:  # a program whose subcommands Scout does not know: its first bare word
        first = next((i for i, w in enumerate(argv[1:], 1) if not w.startswith("-")), None)
        if first is not None and BARE_WORD.fullmatch(argv[first]):
            positions.add(offset + first)
    return positions


def simple_commands(text: str) -> list[SimpleCommand] | None:
    """Every simple command of a line (None when it does not parse: nothing can cover it)."""
    try:
        script = parse_script(text)
    except ShellSyntaxError:
        return None
    return [SimpleCommand(tuple(c.argv), _plain(c)) for c in script.commands if c.words]


def _plain(command: Command) -> bool:
    if command.assignments or command.substitutions:
        return False
    for redirect in command.redirects:
        target = redirect.target.text
        if redirect.op in HARMLESS_REDIRECTS or (redirect.op in (">&", "<&") and target.isdigit()):
            continue
        if redirect.op in (">", "2>", "&>", ">>") and is_harmless_sink(target):
            continue
        return False
    return True


def exact_pattern(argv: tuple[str, ...]) -> str:
    """The pattern that covers exactly this command (globs in its words escaped)."""
    return shlex.join(GLOB_CHARS.sub(r"[\1]", word) for word in argv)
