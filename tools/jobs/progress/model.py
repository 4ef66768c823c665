"""What a progress reader returns, and the numbers every reader needs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_SI = {"": 1, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_SIZE = re.compile(r"^(?P<number>[\d,]*\.?\d+)\s*(?P<prefix>[kKMGTP]?)(?P<binary>i?)B?$")


@dataclass(frozen=True)
class Progress:
    """How far a job has come, in one line and as numbers.

    `summary` is what the model and the face read ("8/14 files, 53.6G/119G (45%), 411MB/s, ETA
    02:40"). `fraction` is 0..1 when the tool says how much is left. `ready` means the job's work
    is there even though it keeps running (an engine serving). `error` is the log's own error
    line. `waiting` says what the job waits on once the wait has run past its bound (stuck.py).
    `facts` carries the parsed numbers for the world model.
    """

    kind: str
    summary: str
    fraction: float | None = None
    ready: bool = False
    error: str | None = None
    waiting: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)


def size_bytes(text: str) -> int | None:
    """Bytes from a size as tqdm, rsync and docker print it ("4.92G", "31,337,841", "12.3MB",
    "737.82M", "1.5GiB"): decimal prefixes unless the unit says `i`, as those tools mean them."""
    match = _SIZE.match(text.strip())
    if match is None:
        return None
    number = float(match["number"].replace(",", ""))
    prefix = match["prefix"]
    if match["binary"] and prefix:
        return round(number * 1024 ** ("KMGTP".index(prefix.upper()) + 1))
    return round(number * _SI[prefix])


def clock_seconds(text: str) -> int | None:
    """Seconds from a tqdm/rsync clock: "02:40", "1:47:12", "0:00:57"; None for "?"."""
    parts = text.strip().split(":")
    if not all(p.isdigit() for p in parts) or not 1 <= len(parts) <= 3:
        return None
    seconds = 0
    for part in parts:
        seconds = seconds * 60 + int(part)
    return seconds


def percent(done: float, total: float) -> float | None:
    return min(1.0, done / total) if total > 0 else None
