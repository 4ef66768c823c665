"""A format a pasted text may be in: the signs that recognise it and the reader that reads it.

A sign is a pattern with a weight. One decisive sign (the banner only that tool prints) weighs
1.0, the threshold of recognition; weaker signs (a column name several tools share) weigh less
and add up. The score is the sum, so among formats that all recognise a text the one that
recognises more of it wins (`docker run` pulling an image, then `nvidia-smi` in it: a table).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

RECOGNISED = 1.0
Facts = dict[str, object]
Told = tuple[Facts, list[str]]


@dataclass(frozen=True)
class Sign:
    """Something the format's text shows (a pattern's search, or any test of the text, such as
    the error grammar finding an error line), and how much finding it says."""

    shows: Callable[[str], object]
    weight: float = RECOGNISED


def sign(pattern: str, weight: float = RECOGNISED, flags: int = re.M) -> Sign:
    return Sign(re.compile(pattern, flags).search, weight)


@dataclass(frozen=True)
class Format:
    """One output Scout can read: its name (the command that prints it), its signs, its reader.

    `read` returns the facts it established and the findings they support; it raises ParseError
    for text that resembles the format but is not it, and the next best format is tried.
    """

    name: str
    signs: tuple[Sign, ...]
    read: Callable[[str], Told]

    def score(self, text: str) -> float:
        return sum(s.weight for s in self.signs if s.shows(text))


@dataclass(frozen=True)
class Reading:
    """What a pasted text said: its format, the facts read from it, the findings they support."""

    format: str
    facts: Facts = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Unread:
    """No reader recognised the text; `closest` is the format it resembled most, if any."""

    closest: str | None
