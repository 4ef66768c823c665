"""Bounding what the model reads: head and tail of long output, the rest spilled to a file."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DEFAULT_LIMIT = 8_000


@dataclass(frozen=True)
class BoundedText:
    text: str
    truncated: bool
    total_chars: int
    spill_path: Path | None


def bound_text(
    text: str,
    *,
    limit: int = DEFAULT_LIMIT,
    spill_dir: Path | None = None,
    label: str = "output",
    redact: Callable[[str], str] = lambda text: text,
) -> BoundedText:
    """Keep the first and last parts of `text` within `limit` characters.

    The cut is marked in the text itself, with how much was left out and where the whole output
    was saved, so the model can ask for a narrower command instead of guessing. The spill file
    holds the output as `redact` leaves it, never raw secrets.
    """
    if len(text) <= limit:
        return BoundedText(text, False, len(text), None)
    spill_path = None
    if spill_dir is not None:
        spill_dir.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:12]
        spill_path = spill_dir / f"{label}-{digest}.txt"
        spill_path.write_text(redact(text), encoding="utf-8", errors="replace")
    head_len = limit * 2 // 3
    tail_len = limit - head_len
    omitted = len(text) - head_len - tail_len
    where = f"; full output saved to {spill_path}" if spill_path else ""
    marker = f"\n[... {omitted} characters omitted{where} ...]\n"
    return BoundedText(text[:head_len] + marker + text[-tail_len:], True, len(text), spill_path)
