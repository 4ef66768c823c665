"""A log as a terminal would have shown it: progress bars rewritten with \\r and escape
sequences; each line's message without its launchers' prefixes (prefixes.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

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
