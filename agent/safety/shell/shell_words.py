"""What the shell reader produces: words, redirections, simple commands and the script holding them.

A word remembers how much of it is only known when the line runs: `dynamic` for parameter and
command expansion (`$X`, `$(…)`), `pattern` for unquoted globs and braces that the shell turns
into other words (`*.log`, `{-o,/etc/x}`). Either way its value is `RuntimeText`, so the
classifier never mistakes it for the literal text it was written as.
"""

from __future__ import annotations

from dataclasses import dataclass


class ShellSyntaxError(ValueError):
    """The text is not shell this reader can follow (unbalanced quotes, unsupported syntax)."""


class RuntimeText(str):
    """A word whose value holds an expansion, so the shell only knows it when the line runs."""

    __slots__ = ()


@dataclass(frozen=True)
class Word:
    """One shell word after quote removal; `substitutions` are the commands it would run."""

    text: str
    dynamic: bool = False
    quoted: bool = False
    substitutions: tuple[str, ...] = ()
    expansions: tuple[str, ...] = ()
    assignment: str | None = None
    pattern: bool = False
    braced: tuple[str, ...] = ()  # the words brace expansion makes of it

    @property
    def value(self) -> str:
        return RuntimeText(self.text) if self.dynamic or self.pattern else self.text


@dataclass(frozen=True)
class Redirect:
    """`[fd]op target`; here-documents carry their body (and whether it is expanded)."""

    op: str
    target: Word
    fd: int | None = None
    body: str | None = None


@dataclass(frozen=True)
class Command:
    """One simple command: `NAME=value … word … redirects`, and where it sits."""

    assignments: tuple[Word, ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    piped_input: bool = False
    nested: bool = False

    @property
    def argv(self) -> list[str]:
        return [w.value for w in self.words]

    @property
    def substitutions(self) -> list[str]:
        found: list[str] = []
        for word in (*self.assignments, *self.words):
            found.extend(word.substitutions)
        for redirect in self.redirects:
            found.extend(redirect.target.substitutions)
        return found


@dataclass(frozen=True)
class Script:
    """Every simple command in the source, in order, flattened out of lists, pipes and groups."""

    commands: tuple[Command, ...]
