"""A log as a terminal would have shown it: progress bars rewritten with \\r and escape
sequences; each line's message without its launchers' prefixes (prefixes.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise

from tools.jobs.progress.prefixes import peel

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def segments(text: str) -> Iterator[str]:
    """Every piece between \\r and \\n, without escape sequences and prefixes: each state a bar
    passed through, in order (a glued or rewritten line yields all of its states)."""
    for piece in re.split(r"[\r\n]", _ANSI.sub("", text)):
        if piece.strip():
            yield peel(piece).text


def screen_lines(text: str) -> list[str]:
    """The lines a terminal shows at the end: for a line rewritten with \\r, its last state."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" not in text:  # (a line blank after rstrip is blank: one strip a line)
        return [line for line in map(str.rstrip, text.split("\n")) if line]
    shown = []
    for line in text.split("\n"):
        states = [s for s in line.split("\r") if s.strip()]
        if states:
            shown.append(states[-1].rstrip())
    return shown


def said_lines(text: str) -> list[str]:
    """The messages of the lines a terminal shows at the end (`screen_lines`, each `message`)."""
    return [said for said in map(message, screen_lines(text)) if said]


def message(line: str) -> str:
    """The message of one log line without who printed it, when and at what level."""
    return peel(line).text


# Widths terminals wrap at; a line exactly this long was most likely cut by the terminal.
_TERMINAL_WIDTHS = frozenset({80, 100, 120, 132, 160, 180, 200, 220, 240, 250, 256})


def rejoined(lines: list[str]) -> list[str]:
    """Lines as they were written: a line ending in a continuation backslash joined with the
    next, and a line the terminal cut at its width joined with the fragment after it (a line
    with none of a log line's prefixes, not indented)."""
    width = _wrap_width(lines)
    joined: list[str] = []
    carry = ""
    for number, line in enumerate(lines):
        following = lines[number + 1] if number + 1 < len(lines) else None
        if line.endswith("\\") and following is not None:
            carry += line[:-1].rstrip() + " "
        elif len(line) == width and following is not None and _fragment(following):
            carry += line
        else:
            joined.append(carry + line)
            carry = ""
    return joined


def _wrap_width(lines: list[str]) -> int | None:
    """The terminal's width, when lines were cut at it: no line is longer than the width, so it
    is the longest line's length, and two lines of that length (not one line read twice, as a
    milestone also in the tail is) were followed by fragments."""
    widest = max(map(len, lines), default=0)
    cut = {line for line, after in pairwise(lines) if len(line) == widest and _fragment(after)}
    return widest if len(cut) > 1 or (cut and widest in _TERMINAL_WIDTHS) else None


def _fragment(line: str) -> bool:
    """A line that continues the one before: none of a log line's prefixes, not indented."""
    return bool(line) and not line[:1].isspace() and peel(line).text == line.strip()
