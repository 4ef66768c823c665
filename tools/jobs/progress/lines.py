"""A log as a terminal would have shown it: progress bars rewritten with \\r, escape sequences,
per-process prefixes (`(APIServer pid=1)`, `(RayWorkerWrapper pid=.., ip=..)`, `[.. TP3]`),
Ray's de-duplication suffix, and the level/time/source header vLLM puts before every message.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PROCESS_PREFIX = re.compile(r"^(?:\((?:\w+) pid=\d+(?:, ip=[\w.:-]+)?\)\s*)+")
_RANK_PREFIX = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?: (?:TP|DP|PP|EP)\d+)*\]\s*")
_DEDUP_SUFFIX = re.compile(r"\s*\[repeated \d+x across cluster\].*$")
_LOG_HEADER = re.compile(
    r"^(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+"
    r"\[?[\w./-]+:\d+\]\s*"
)
_UVICORN_HEADER = re.compile(r"^(?:INFO|WARNING|ERROR):\s+")


def segments(text: str) -> Iterator[str]:
    """Every piece between \\r and \\n, escape sequences removed: each state a bar passed
    through, in order (a glued or rewritten line yields all of its states)."""
    for piece in re.split(r"[\r\n]", _ANSI.sub("", text)):
        if piece.strip():
            yield piece


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


def message(line: str) -> str:
    """The message of one log line without who printed it and when."""
    line = _PROCESS_PREFIX.sub("", line.strip())
    line = _RANK_PREFIX.sub("", line)
    line = _DEDUP_SUFFIX.sub("", line)
    return _LOG_HEADER.sub("", line)


def plain(line: str) -> str:
    """`message`, and without uvicorn's `INFO:     ` level either."""
    return _UVICORN_HEADER.sub("", message(line))
