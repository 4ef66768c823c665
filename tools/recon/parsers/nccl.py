"""nccl-tests summaries: the bus bandwidth that says whether the RoCE link is healthy."""

from __future__ import annotations

import re
from dataclasses import dataclass

_AVG_BUS_BANDWIDTH = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<value>\d+(?:\.\d+)?)", re.M)


def parse_nccl_avg_bus_bandwidth(text: str) -> float | None:
    """GB/s from `# Avg bus bandwidth : 21.4033`, or None when the run printed no summary.

    Two healthy Sparks over 200G RoCE show ~21 GB/s for all_gather; ~2.8 GB/s means a degraded
    link. Multiply by 8 for Gb/s.
    """
    match = _AVG_BUS_BANDWIDTH.search(text)
    return float(match["value"]) if match else None


_RANK = re.compile(r"^#\s*Rank\s+(?P<rank>\d+)\s.*?\bon\s+(?P<host>\S+)\s+device\b", re.M)


def parse_nccl_ranks(text: str) -> list[str]:
    """The ranks' hostnames in rank order, from `# Using devices` (`#  Rank  0 Group  0 Pid
    548419 on spark-fb97 device  0 [000f:01:00] NVIDIA GB10`)."""
    ranks = {int(m["rank"]): m["host"] for m in _RANK.finditer(text)}
    return [ranks[r] for r in sorted(ranks)]


@dataclass(frozen=True)
class NcclRow:
    """One size row of an nccl-tests table: bus bandwidth out of place and in place, GB/s."""

    size_bytes: int
    busbw_gb_s: float
    busbw_in_place_gb_s: float


# size count type redop root | time algbw busbw #wrong (out of place) | the same in place
_ROW = re.compile(
    r"^\s*(?P<size>\d+)\s+\d+\s+\w+\s+\w+\s+-?\d+\s+[\d.]+\s+[\d.]+\s+(?P<busbw>[\d.]+)\s+\S+"
    r"\s+[\d.]+\s+[\d.]+\s+(?P<busbw_in>[\d.]+)\s+\S+\s*$",
    re.M,
)


def parse_nccl_rows(text: str) -> list[NcclRow]:
    """The size rows printed so far (a run prints one per size as it goes)."""
    return [
        NcclRow(int(m["size"]), float(m["busbw"]), float(m["busbw_in"]))
        for m in _ROW.finditer(text)
    ]
