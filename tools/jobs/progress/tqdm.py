"""tqdm bars, the progress format of the Hugging Face Hub client and of vLLM's loaders.

`desc: 45%|####5     | 53.6G/119G [02:10<02:40, 411MB/s]` with a total, `desc: 0.00B [00:00,
?B/s]` without; in a file each state is rewritten with \\r on one physical line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from tools.jobs.progress.model import clock_seconds, size_bytes

_BAR = re.compile(
    r"(?P<desc>[^\r\n|]*?):\s*(?:(?P<pct>\d+)%\s*(?:\|[^|\r\n]*\||Completed\s*\|))?\s*"
    r"(?P<n>\d[\d.,]*[kMGTP]?)(?P<unit>[A-Za-z]*?)(?:/(?P<total>\d[\d.,]*[kMGTP]?)[A-Za-z]*)?"
    r"\s*\[(?P<elapsed>[\d:]+)(?:<(?P<remaining>[\d:?]+))?,\s*(?P<rate>[^\]\r\n]*)\]"
)


@dataclass(frozen=True)
class Bar:
    """One state of one bar; sizes in bytes when the bar counts bytes."""

    desc: str
    done: float
    total: float | None
    rate: str
    elapsed_s: int | None
    remaining_s: int | None
    counts_bytes: bool


def bars(pieces: Iterable[str]) -> list[Bar]:
    """Every bar state in the pieces, in order (a glued piece may hold several)."""
    found = []
    for piece in pieces:
        for match in _BAR.finditer(piece):
            found.append(_bar(match))
    return found


def _bar(match: re.Match[str]) -> Bar:
    rate = match["rate"].strip()
    counts_bytes = "B/s" in rate or match["unit"] == "B"
    done = _number(match["n"], counts_bytes)
    total = _number(match["total"], counts_bytes) if match["total"] else None
    remaining = match["remaining"]
    return Bar(
        desc=match["desc"].strip().rstrip(":").strip(),
        done=done,
        total=total,
        rate=rate,
        elapsed_s=clock_seconds(match["elapsed"]),
        remaining_s=clock_seconds(remaining) if remaining else None,
        counts_bytes=counts_bytes,
    )


def _number(text: str, counts_bytes: bool) -> float:
    if counts_bytes:
        return float(size_bytes(text) or 0)
    return float(text.replace(",", ""))


def human_bytes(value: float) -> str:
    """Bytes the way tqdm shows them (decimal prefixes): 53.6G, 212M, 0.00B."""
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:.0f}B"


def clock(seconds: int) -> str:
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"
