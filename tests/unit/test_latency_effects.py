"""The simulated engine's effects: what a bad benchmark method trips over."""

from __future__ import annotations

import random
import statistics
from pathlib import Path

import pytest

from sim.fakehost import latency_effects as effects

RATES = {"ttft_s": 0.48, "tok_s": 30.0}


def timing(*, cached: bool = False, cold: float = 0.0, c: int = 4, arrivals=(), seed: int = 1):
    return effects.request_timing(
        **RATES, concurrency=c, input_len=1024, output_len=128, cached=cached, cold=cold,
        run_factor=1.0, arrivals_prefill_ms=list(arrivals), rng=random.Random(seed),
    )  # fmt: skip


def test_a_cached_prompt_comes_back_far_sooner_than_the_truth() -> None:
    truth = effects.uncached_ttft_ms(0.48, 4, 1024)
    assert truth == pytest.approx(480 * 4**0.25)  # the reference prompt at c=4
    fresh = statistics.median(timing(seed=s).ttft for s in range(200))
    cached = statistics.median(timing(cached=True, seed=s).ttft for s in range(200))
    assert fresh == pytest.approx(truth, rel=0.02)
    assert cached < 0.2 * truth


def test_the_first_requests_are_slow_and_the_engine_warms_up() -> None:
    memory = effects.EngineMemory()
    colds = [memory.serve() for _ in range(effects.WARMUP_REQUESTS + 5)]
    assert colds[0] == 1.0 and colds[-1] == 0.0 and colds == sorted(colds, reverse=True)
    assert timing(cold=1.0).ttft > 2 * timing(cold=0.0).ttft


def test_a_long_prefill_stretches_the_decodes_it_joins() -> None:
    stall = effects.prefill_ms(0.48, 8192)  # a long prompt arriving mid-decode
    calm, crowded = timing(), timing(arrivals=[stall])
    assert max(crowded.itls) - max(calm.itls) == pytest.approx(stall, rel=0.1)
    assert sum(crowded.itls) > sum(calm.itls) + 0.9 * stall


def test_the_cache_forgets_its_oldest_prompts_when_full() -> None:
    memory = effects.EngineMemory()
    assert not memory.hit("a", effects.CACHE_TOKENS // 2)
    assert memory.hit("a", effects.CACHE_TOKENS // 2)
    memory.hit("b", effects.CACHE_TOKENS // 2)
    memory.hit("c", effects.CACHE_TOKENS // 2)  # a is the least recently used: evicted
    assert not memory.hit("a", 1) and memory.hit("c", effects.CACHE_TOKENS // 2)


def test_the_memory_is_kept_between_processes_and_a_restart_starts_cold(tmp_path: Path) -> None:
    path = effects.memory_path(tmp_path, "ctr", 100)
    with effects.remembered(path) as memory:
        memory.serve()
        memory.hit("prompt", 10)
    with effects.remembered(path) as memory:
        assert memory.served == 1 and memory.hit("prompt", 10)
    with effects.remembered(effects.memory_path(tmp_path, "ctr", 101)) as restarted:
        assert restarted.served == 0 and not restarted.cached


def test_runs_differ_by_a_few_percent() -> None:
    factors = [effects.run_factor(random.Random(s)) for s in range(400)]
    assert 0.01 < statistics.stdev(factors) < 0.03 and len(set(factors)) == 400
