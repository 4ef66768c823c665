"""A rule's `command=` matched against the parsed command, never against its text.

A pattern is one simple command: its first word a literal program, then words matched one by one
(shell globs inside a word: `vllm_*`), and a final lone `*` for any further arguments
(`nvidia-smi*` is read as `nvidia-smi *`). It covers a simple command only when both have the
same program and subcommands (`command_path`), every word matches, and the command is plain:
no assignment, no substitution, no redirection beyond reading or /dev/null. A line with several
commands is covered only when each of them is, so `*` can never reach across `;`, `|`, `&&`, a
newline or a `$(…)`.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import dataclass

from agent.safety.shell.command_path import command_path
from agent.safety.shell.paths import is_harmless_sink
from agent.safety.shell.shell_parse import Command, ShellSyntaxError, parse_script
from agent.safety.shell.shell_words import RuntimeText

GLOB_CHARS = re.compile(r"([*?\[])")
HARMLESS_REDIRECTS = frozenset({"<", "<<<"})


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
    path: tuple[str, ...]

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
        words = [w.text for w in command.words]
        any_rest = words[-1] == "*" or (words[-1].endswith("*") and not words[-1].endswith("\\*"))
        if words[-1] == "*":
            words = words[:-1]
        elif any_rest:
            words[-1] = words[-1][:-1]
        if not words or GLOB_CHARS.search(words[0]):
            raise PatternError(f"command pattern {text!r} must start with a literal program name")
        return cls(tuple(words), any_rest, command_path(words))

    def covers(self, command: SimpleCommand) -> bool:
        argv = command.argv
        if not command.plain or isinstance(argv[0], RuntimeText) or argv[0] != self.words[0]:
            return False
        if command_path(list(argv)) != self.path:
            return False
        if len(argv) < len(self.words) or (len(argv) > len(self.words) and not self.any_rest):
            return False
        return all(
            _word_matches(word, pattern) for word, pattern in zip(argv, self.words, strict=False)
        )


def _word_matches(word: str, pattern: str) -> bool:
    if isinstance(word, RuntimeText):
        return False
    return fnmatch.fnmatchcase(word, pattern)


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
