"""Human-readable sizes and durations in the styles of procps, coreutils and the docker CLI."""

from __future__ import annotations

import math

_BINARY = ["B", "Ki", "Mi", "Gi", "Ti", "Pi"]


def human_binary(num_bytes: int) -> str:
    """procps `free -h`: `3.5Gi`, `121Gi`, `0B` (one decimal below 10, else truncated)."""
    if num_bytes < 1024:
        return f"{num_bytes}B"
    value, unit = float(num_bytes), 0
    while value >= 1024 and unit < len(_BINARY) - 1:
        value /= 1024
        unit += 1
    if value < 10:
        return f"{value:.1f}{_BINARY[unit]}"
    return f"{int(value)}{_BINARY[unit]}"


def human_df(num_kb: int) -> str:
    """coreutils `df -h`: powers of 1024, rounded up, one decimal below 10 (`3.7T`, `89G`, `0`)."""
    if num_kb == 0:
        return "0"
    value, units = float(num_kb) * 1024, "BKMGTPE"
    unit = 0
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024
        unit += 1
    if unit == 0:
        return str(int(value))
    if value < 10:
        value = math.ceil(value * 10) / 10
        if value < 10:
            return f"{value:.1f}{units[unit]}"
    return f"{math.ceil(value)}{units[unit]}"


def docker_duration(seconds: float) -> str:
    """The docker CLI's `units.HumanDuration`: `About a minute`, `7 weeks`, `2 hours`."""
    s = int(seconds)
    if s < 1:
        return "Less than a second"
    if s == 1:
        return "1 second"
    if s < 60:
        return f"{s} seconds"
    minutes = s // 60
    if minutes == 1:
        return "About a minute"
    if minutes < 60:
        return f"{minutes} minutes"
    hours = round(s / 3600)
    if hours == 1:
        return "About an hour"
    if hours < 48:
        return f"{hours} hours"
    if hours < 24 * 7 * 2:
        return f"{hours // 24} days"
    if hours < 24 * 30 * 2:
        return f"{hours // 24 // 7} weeks"
    if hours < 24 * 365 * 2:
        return f"{hours // 24 // 30} months"
    return f"{hours // 24 // 365} years"


def parse_docker_size(text: str) -> int:
    """Bytes of a size as `docker images` shows it ("21.6GB", "512MB"): decimal units."""
    number = text.rstrip("BbkKMGT")
    scale = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}[
        text[len(number) :].rstrip("Bb")
    ]
    return round(float(number) * scale)
