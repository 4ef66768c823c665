"""`quick` is what fits in about two minutes of the engine's time, and says what that could not
measure (issue 38).

On two Sparks serving a 119 GB model a stream makes 10-20 tokens/s; 100 requests a level with
fixed outputs would take a quarter of an hour. The simulated engine here is that slow; the time
it spent serving the sweep (its own clock, warm-ups and vLLM's initial test requests included,
sim/fakehost/bench_serve.py) must stay within quick's budget, and the report must give no
percentile where fewer than 100 requests carry it and name each level it did not measure.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sim.scenario import Scenario
from tests.integration.test_proof_sim import MODEL, seed_with_vllm, serving, session_state
from tools.base import ToolContext
from tools.deploy.proof.bench_budget import QUICK_BUDGET_S
from tools.endpoint_check import EndpointCheckInput, EndpointCheckTool
from tools.ssh import SSHPool


def paced(tok_s: float, ttft_s: float) -> Scenario:
    raw = seed_with_vllm("0.11.0+nv25.11").model_dump()
    for host in raw["hosts"].values():
        host["rates"] |= {"roce_tok_s": tok_s, "socket_tok_s": tok_s, "ttft_s": ttft_s}
    return Scenario.model_validate(raw)


@pytest.fixture
async def slow(tmp_path: Path) -> AsyncIterator[SSHPool]:
    async for pool in serving(paced(10.0, 1.2), tmp_path):
        yield pool


@pytest.fixture
async def fast(tmp_path: Path) -> AsyncIterator[SSHPool]:
    async for pool in serving(paced(2000.0, 0.02), tmp_path):
        yield pool


def engine_busy_s(tmp_path: Path) -> float:
    """What the engine's own clock says its benchmark runs took, all told."""
    (memory,) = (tmp_path / "sim" / "hosts" / "spark-a" / "engine").glob("memory-*.json")
    return json.loads(memory.read_text())["busy_s"]


async def quick(pool: SSHPool, tmp_path: Path) -> dict:
    ctx = ToolContext(spill_dir=tmp_path / "t" / "spill")
    params = EndpointCheckInput(host="spark-a", model=MODEL, concurrency=[1, 4, 16], runs=3)
    result = await EndpointCheckTool(session_state(), pool).run(params, ctx)
    assert not result.is_error, result.text
    return {"text": result.text, **result.data["report"]}


@pytest.mark.slow
async def test_quick_on_a_slow_engine_stays_in_budget_and_labels_what_it_could_not_carry(
    slow, tmp_path
) -> None:
    report = await quick(slow, tmp_path)
    busy = engine_busy_s(tmp_path)
    assert 0 < busy <= QUICK_BUDGET_S, busy  # 100 a level would be ~25 minutes here
    rows = report["rows"]
    assert rows and rows[0]["concurrency"] == 1
    for row in rows:  # fewer than 100: no percentile at all, the mean and its interval instead
        assert row["requests"] < 100 and set(row["ttft_ms"].values()) == {None}
        assert row["ttft_mean_ms"] is not None and row["tok_s_per_user"] > 0
        assert f"c={row['concurrency']} n={row['requests']}" in report["text"]
    assert "under 100 samples, so no percentiles" in report["text"]
    missing = {int(c) for c in report["unmeasured"]}
    assert 16 in missing and missing.isdisjoint(r["concurrency"] for r in rows)
    assert "c=16: NOT MEASURED in quick: one run at c=16 needs ~" in report["text"]
    assert report["method"].startswith(f"quick, a {QUICK_BUDGET_S:.0f} s budget planned from")
    assert "(mean, n=" in report["text"].splitlines()[0]  # the headline says what its TTFT is


async def test_quick_on_a_fast_engine_pools_its_hundred_a_level_with_p50_and_p90(
    fast, tmp_path
) -> None:
    report = await quick(fast, tmp_path)
    assert engine_busy_s(tmp_path) <= QUICK_BUDGET_S
    assert [(r["concurrency"], r["runs"]) for r in report["rows"]] == [(1, 3), (4, 3), (16, 3)]
    for row in report["rows"]:
        assert row["requests"] >= 100 and row["ttft_mean_ms"] is None
        assert row["ttft_ms"]["p90"] is not None and row["ttft_ms"]["p99"] is None
    assert report["unmeasured"] == {} and "NOT MEASURED" not in report["text"]
