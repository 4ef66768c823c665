"""Simulated time for long work (downloads, pulls, copies, engines loading).

The scenario's `rates.time_scale` says how many simulated seconds pass per real second; the
tools print the simulated clock and rates, as the real tool would have after that long. Work
ends early when the simulator is gone, like the engines do (procs.simulator_alive).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .procs import simulator_alive

TICK_S = 0.1  # real seconds between two progress updates
# N concurrent decode streams share an aggregate rate × N^0.556: two Sparks serving FP8 with TP=2
# give ~30 tok/s to one stream and ~140 tok/s in aggregate to 16 (inference-atlas PR #112)
CONCURRENCY_EXPONENT = 0.556


def stream_rate(single_tok_s: float, streams: int) -> float:
    """Tokens/s one stream gets while `streams` decode at once."""
    n = max(streams, 1)
    return single_tok_s * n**CONCURRENCY_EXPONENT / n


class SimulatorGone(Exception):
    """The simulator stopped; the work ends with it."""


def time_scale(state: dict[str, Any]) -> float:
    return float(state.get("rates", {}).get("time_scale", 1.0))


def ticks(total_s: float, state: dict[str, Any], host_dir: Path) -> Iterator[float]:
    """Yield the simulated seconds passed, every tick, until `total_s` have passed."""
    scale = time_scale(state)
    started = time.monotonic()
    while True:
        passed = (time.monotonic() - started) * scale
        if passed >= total_s:
            yield total_s
            return
        yield passed
        if not simulator_alive(host_dir):
            raise SimulatorGone
        time.sleep(min(TICK_S, (total_s - passed) / scale))
