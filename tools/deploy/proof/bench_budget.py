"""What a `quick` sweep can afford: about two minutes of the engine's time, planned from the pace
its warm-up requests were served at, never a fixed count of requests.

Why: a fixed 100 requests per level is minutes on a fast engine and a quarter of an hour on two
Sparks serving a 119 GB model at 10-20 tokens/s a stream. So the sweep first sends a few warm-up
requests, alone, and times them (`single_s`, one request's end-to-end time); each level then gets
a share of what is left of the budget, and as many runs and requests as that share pays for, at
most quick's 100. What a share cannot pay for is said, not guessed: a level with under 100
requests gets no percentile (bench_pooling.reportable), and a level that cannot afford one round
of its concurrency is reported as not measured.

The estimate of a level's cost, as `vllm bench serve` spends it (vllm/benchmarks/serve.py):
every run sends an initial test request, alone (`single_s`); the warm-ups (a round at the
level's concurrency before its first run; none at c=1, where the test request is one) and the
measured requests go `c` at a time, a round taking `single_s × c^0.5`: batched decode shares
the engine, and a published sweep of two Sparks (inference-atlas PR #112: ~30 tok/s single,
~140 tok/s aggregate at 16) fits aggregate ∝ c^0.556, so a round at c^0.5 errs on the long
side. The warm-ups' own times include the engine's cold start, which errs the same way.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

QUICK_BUDGET_S = 120.0  # the whole sweep, warm-ups included: "what fits in ~2 minutes"
QUICK_CAP = 100  # measured requests per level quick needs no more of (p50 and p90 rest on 100)
CALIBRATION_PROMPTS = 2  # timed warm-ups before the sweep (the initial test request makes three)
ROUND_EXPONENT = 0.5  # a round of c concurrent requests takes single_s × c^0.5 (see above)


@dataclass(frozen=True)
class Level:
    """One level as quick runs it: how many runs, prompts per run (the first one included, which
    vLLM's own warm-ups cache and the pooled figures leave out), and warm-ups before the first."""

    concurrency: int
    runs: int
    prompts: int
    warmups: int
    cost_s: float  # the estimate this plan spent on it

    @property
    def measured(self) -> int:
        return self.runs * (self.prompts - 1)


@dataclass(frozen=True)
class BudgetPlan:
    """The levels quick measures, the ones it cannot afford (concurrency → why), and the pace
    and budget it planned with."""

    levels: tuple[Level, ...]
    unmeasured: dict[int, str]
    single_s: float
    budget_s: float


def single_request_s(latencies_s: list[float]) -> float | None:
    """One request's end-to-end time, from the timed warm-ups: their median, the first left out
    where there are others (vLLM's initial test request served its prompt before it)."""
    kept = latencies_s[1:] if len(latencies_s) > 1 else latencies_s
    return statistics.median(kept) if kept else None


def round_s(single_s: float, concurrency: int) -> float:
    return single_s * max(concurrency, 1) ** ROUND_EXPONENT


def warmups(concurrency: int) -> int:
    """A round at the level's concurrency; at c=1 none: the run's initial test request is one."""
    return 0 if concurrency == 1 else concurrency


def _cost(single_s: float, c: int, runs: int, prompts: int) -> float:
    rounds = runs * math.ceil(prompts / c) + math.ceil(warmups(c) / c)
    return runs * single_s + rounds * round_s(single_s, c)


def _least(single_s: float, c: int) -> float:
    """One run of one full round and one measured request: the least a level can be."""
    return _cost(single_s, c, 1, max(c, 2))


def _fit(single_s: float, c: int, most_runs: int, share_s: float) -> Level | None:
    """The most runs, then the most prompts, that `share_s` pays for: every run at least one
    full round of `c` and one measured request; None when not even one run fits."""
    step = round_s(single_s, c)
    for runs in range(most_runs, 0, -1):
        cap = math.ceil(QUICK_CAP / runs) + 1
        left = share_s - runs * single_s - math.ceil(warmups(c) / c) * step
        per_run = min(math.floor(left / step / runs + 1e-9), math.ceil(cap / c)) if left > 0 else 0
        prompts = min(per_run * c, cap)
        if prompts >= max(c, 2):
            return Level(c, runs, prompts, warmups(c), _cost(single_s, c, runs, prompts))
    return None


def plan_levels(
    concurrency: tuple[int, ...], runs: int, single_s: float, left_s: float
) -> BudgetPlan:
    """The levels whose least run the budget pays for, smallest first (the first always: a proof
    never ends with nothing); each gets its least, and an equal part of what remains (what a
    level leaves unspent goes to the next)."""
    kept: list[int] = []
    unmeasured: dict[int, str] = {}
    for c in concurrency:
        if not kept or sum(_least(single_s, k) for k in (*kept, c)) <= left_s:
            kept.append(c)
            continue
        left = max(left_s - sum(_least(single_s, k) for k in kept), 0.0)
        unmeasured[c] = (
            f"one run at c={c} needs ~{_least(single_s, c):.0f} s at the warm-ups' pace "
            f"({single_s:.1f} s a request); ~{left:.0f} s of quick's {QUICK_BUDGET_S:.0f} s "
            "were left for it: `full` measures it"
        )
    surplus = left_s - sum(_least(single_s, c) for c in kept)
    levels = []
    for index, c in enumerate(kept):
        share = _least(single_s, c) + max(surplus, 0.0) / (len(kept) - index)
        level = _fit(single_s, c, runs, share) or Level(
            c, 1, max(c, 2), warmups(c), _least(single_s, c)
        )
        surplus -= level.cost_s - _least(single_s, c)
        levels.append(level)
    return BudgetPlan(tuple(levels), unmeasured, single_s, left_s)
