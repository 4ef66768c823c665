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
    spill_path, where = None, ""
    if spill_dir is not None:
        digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:12]
        target = spill_dir / f"{label}-{digest}.txt"
        try:
            spill_dir.mkdir(parents=True, exist_ok=True)
            target.write_text(redact(text), encoding="utf-8", errors="replace")
        except OSError as exc:  # disk full: the cut says where it could not go, and why
            said = (exc.strerror or str(exc)).lower()
            where = f"; the full output could not be saved to {target}: {said} ({spill_dir})"
        else:
            spill_path, where = target, f"; full output saved to {target}"
    head_len = limit * 2 // 3
    tail_len = limit - head_len
    omitted = len(text) - head_len - tail_len
    marker = f"\n[... {omitted} characters omitted{where} ...]\n"
    return BoundedText(text[:head_len] + marker + text[-tail_len:], True, len(text), spill_path)
