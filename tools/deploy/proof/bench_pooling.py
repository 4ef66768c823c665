"""A level's figures over its pooled requests, and how far its runs agree.

A percentile of a handful of requests is the largest of them, not a p99, and a median of per-run
percentiles is no percentile of anything. So a level's runs are pooled: every measured request's
TTFT, TPOT and end-to-end latency, and every inter-token gap, in one sample each (the per-request
lists `vllm bench serve --save-detailed` writes), and a percentile is reported only where it
rests on enough of them (`reportable`). The first request of each run is left out: vLLM sends its
initial test request and its warm-ups with that prompt, so the engine serves it from its prefix
cache. Beside the pooled figures, the runs' own medians and throughputs give the run-to-run
spread, with a 95 % confidence interval (Student's t over the runs).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MIN_SAMPLES = 100  # no percentile of fewer samples
MIN_TAIL = 10  # samples beyond a percentile: p99 needs 1,000 (AIPerf's advice for a p99)
# two-sided 95 % Student's t for 1..10 degrees of freedom (runs − 1)
T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)
CACHED_FIRST = 1  # requests per run served from the cache by vLLM's test request and warm-ups


def reportable(p: float, samples: int) -> bool:
    """Whether percentile `p` of `samples` values rests on enough of them: at least MIN_SAMPLES
    in all, and at least MIN_TAIL beyond it."""
    return samples >= MIN_SAMPLES and round(samples * (100 - p), 6) >= MIN_TAIL * 100


def percentile(values: Sequence[float], p: float) -> float:
    """Linear interpolation between the two nearest ranks (numpy's default, as vLLM uses)."""
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    low, high = math.floor(k), math.ceil(k)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def percentiles(values: Sequence[float], wanted: Sequence[int]) -> dict[str, float | None]:
    """pNN → value where reportable, else None (shown as –, never made up)."""
    return {f"p{p}": percentile(values, p) if reportable(p, len(values)) else None for p in wanted}


def ci95(values: Sequence[float]) -> float | None:
    """Half-width of the 95 % confidence interval of the mean of `values` (None under 2)."""
    if len(values) < 2:
        return None
    t = T95[min(len(values) - 1, len(T95)) - 1]
    return t * statistics.stdev(values) / math.sqrt(len(values))


@dataclass
class Pool:
    """One level's measured requests, pooled over its runs (times in ms)."""

    ttft: list[float]
    tpot: list[float]
    itl: list[float]
    e2el: list[float]
    run_ttft_medians: list[float]
    left_out: int  # requests served from the cache by the benchmark's own warm-ups


def pooled(runs: list[dict[str, Any]]) -> Pool | None:
    """The level's requests from its runs' per-request lists; None when a run has none."""
    if not runs or any("ttfts" not in r for r in runs):
        return None
    pool = Pool([], [], [], [], [], 0)
    for run in runs:
        ttfts, itls = run["ttfts"][CACHED_FIRST:], run["itls"][CACHED_FIRST:]
        lengths, ends = run["output_lens"][CACHED_FIRST:], run["latencies"][CACHED_FIRST:]
        errors = run.get("errors", [""] * len(run["ttfts"]))[CACHED_FIRST:]
        pool.left_out += min(CACHED_FIRST, len(run["ttfts"]))
        kept = [i for i, e in enumerate(errors) if not e]
        pool.ttft += [ttfts[i] * 1000 for i in kept]
        pool.e2el += [ends[i] * 1000 for i in kept]
        pool.itl += [x * 1000 for i in kept for x in itls[i]]
        pool.tpot += [(ends[i] - ttfts[i]) * 1000 / (lengths[i] - 1) for i in kept
                      if lengths[i] > 1]  # fmt: skip
        if kept:
            pool.run_ttft_medians.append(statistics.median(ttfts[i] * 1000 for i in kept))
    return pool


def good_share(pool: Pool, targets: dict[str, float]) -> float | None:
    """The share of pooled requests meeting every target (vLLM's goodput definition)."""
    if not targets or len(pool.tpot) != len(pool.ttft):
        return None
    met = sum(
        all(value <= targets.get(key, math.inf) for key, value in (("ttft", t), ("tpot", p)))
        for t, p in zip(pool.ttft, pool.tpot, strict=True)
    )
    return met / len(pool.ttft) if pool.ttft else None
