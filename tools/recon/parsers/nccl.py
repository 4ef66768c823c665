"""nccl-tests summaries: the bus bandwidth that says whether the RoCE link is healthy."""

from __future__ import annotations

import re

_AVG_BUS_BANDWIDTH = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<value>\d+(?:\.\d+)?)", re.M)


def parse_nccl_avg_bus_bandwidth(text: str) -> float | None:
    """GB/s from `# Avg bus bandwidth : 21.4033`, or None when the run printed no summary.

    Two healthy Sparks over 200G RoCE show ~21 GB/s for all_gather; ~2.8 GB/s means a degraded
    link. Multiply by 8 for Gb/s.
    """
    match = _AVG_BUS_BANDWIDTH.search(text)
    return float(match["value"]) if match else None
