"""Sizes as the recon tools print them ("121Gi", "3.7T", "218.83GiB", "5.3Mi", "0B") to bytes."""

from __future__ import annotations

import re

from tools.recon.parsers.errors import ParseError

_SIZE = re.compile(r"^\s*(?P<number>\d+(?:\.\d+)?)\s*(?P<prefix>[KMGTPE]?)(?:i?B|i)?\s*$", re.I)
_POWERS = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}


def parse_size_bytes(text: str) -> int:
    """Bytes for a size with an optional binary suffix.

    Every suffix counts in powers of 1024: that is what `free -h`, `df -h`, `/proc/meminfo` (kB)
    and Ray (GiB) mean. A bare number is bytes.
    """
    match = _SIZE.match(text)
    if match is None:
        raise ParseError("a size such as '121Gi', '3.7T' or '1024'", text)
    power = _POWERS[match["prefix"].upper()]
    return round(float(match["number"]) * 1024**power)


def parse_optional_int(text: str) -> int | None:
    """An integer, or None for N/A-style placeholders."""
    stripped = text.strip()
    return int(stripped) if re.fullmatch(r"-?\d+", stripped) else None


def parse_optional_float(text: str) -> float | None:
    """A float with an optional trailing unit ("29.02 W", "11W"), or None for placeholders."""
    match = re.match(r"^\s*(-?\d+(?:\.\d+)?)", text)
    return float(match[1]) if match else None
