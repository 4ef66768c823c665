"""The proof's report from a real `vllm bench serve` result file, and the physics flag both ways."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.deploy.proof.engine_bench import parse_results
from tools.deploy.proof.physics import Ceiling, ceiling
from tools.deploy.proof.report import Report, render_table, summarise

FIXTURE = Path(__file__).parents[3] / "fixtures" / "bench"
REAL = json.loads((FIXTURE / "vllm_bench_serve_0.20.0_qwen3_8b_c1.json").read_text())
SPARKS = "Qwen/Qwen3.5-122B-A10B-FP8"


def test_a_real_result_file_without_per_request_lists_gives_throughput_not_percentiles() -> None:
    (row,) = summarise([REAL])  # 4 requests, saved without --save-detailed
    assert (row.concurrency, row.runs, row.requests) == (1, 1, 4)
    assert row.ttft_ms == {"p50": None, "p90": None, "p99": None}  # no percentile of 4
    assert row.tpot_ms == {"p50": None, "p90": None, "p99": None}
    assert row.tok_s_per_user is None and row.goodput_req_s is None  # it saved no TPOT
    assert row.tok_s_aggregate == pytest.approx(64 / 0.75633, abs=1e-2)
    assert row.req_s == pytest.approx(5.2887, abs=1e-3)
    table = render_table(Report("vllm bench serve", [row], {}, "no GPU", None))
    assert table.splitlines()[2].split()[:4] == ["1", "4", "–/–/–", "–/–/–"]


def detailed(ttfts_ms: list[float], tpot_ms: float, c: int = 1, tokens: int = 8) -> dict:
    """A --save-detailed result: each request `tokens` long, its gaps all `tpot_ms`."""
    gaps = [tpot_ms / 1000] * (tokens - 1)
    ends = [t / 1000 + sum(gaps) for t in ttfts_ms]
    duration = sum(ends) / c
    return {**REAL, "max_concurrency": c, "completed": len(ttfts_ms), "duration": duration,
            "total_output_tokens": tokens * len(ttfts_ms),
            "output_throughput": tokens * len(ttfts_ms) / duration,
            "ttfts": [t / 1000 for t in ttfts_ms], "itls": [gaps] * len(ttfts_ms),
            "output_lens": [tokens] * len(ttfts_ms), "latencies": ends,
            "errors": [""] * len(ttfts_ms)}  # fmt: skip


def test_runs_are_pooled_their_cached_first_request_left_out_and_their_spread_kept() -> None:
    # two runs of 51: the first of each served from the cache (10 ms), the rest 400..449 ms
    runs = [detailed([10.0, *(400.0 + i + 50 * k for i in range(50))], 40.0) for k in (0, 1)]
    (row,) = summarise(runs, {"ttft": 425.0, "tpot": 100.0})
    assert (row.runs, row.requests, row.left_out) == (2, 100, 2)
    pooled = sorted(400.0 + i for i in range(100))
    assert row.ttft_ms["p50"] == pytest.approx((pooled[49] + pooled[50]) / 2)
    assert row.ttft_ms["p90"] is not None and row.ttft_ms["p99"] is None  # 1 beyond: not 10
    assert row.tok_s_per_user == pytest.approx(25.0)
    assert row.ttft_run_ms == pytest.approx((424.5 + 474.5) / 2)
    assert row.ttft_ci_ms == pytest.approx(12.706 * 50 / 2**0.5 / 2**0.5, rel=1e-3)
    assert row.goodput_req_s == pytest.approx(0.26 * row.req_s)  # 400..425 ms meet TTFT ≤ 425
    table = render_table(Report("vllm bench serve", [row], {}, "no GPU", None, method="quick"))
    assert "method: quick" in table and "c=1 450 ± 318 ms" in table


def test_result_files_read_back_together_are_split_apart() -> None:
    text = json.dumps(REAL) + json.dumps({**REAL, "max_concurrency": 4}) + "\n"
    assert [r["max_concurrency"] for r in parse_results(text)] == [1, 4]


def test_the_ceiling_for_two_sparks_serving_fp8() -> None:
    found = ceiling(SPARKS, "NVIDIA GB10", 2)
    assert isinstance(found, Ceiling)
    assert found.tok_s == pytest.approx(273 * 2 / 10)  # 273 GB/s × 2 ÷ (10B × 1 byte)
    assert found.judge(30.0) is None  # the published run: plausible


def test_a_figure_above_the_ceiling_is_a_measurement_error() -> None:
    found = ceiling(SPARKS, "NVIDIA GB10", 2)
    assert isinstance(found, Ceiling)
    flag = found.judge(80.0)
    assert flag is not None and "above the ceiling" in flag and "measurement error" in flag


def test_a_figure_far_below_the_ceiling_is_a_misconfiguration() -> None:
    found = ceiling(SPARKS, "NVIDIA GB10", 2)
    assert isinstance(found, Ceiling)
    flag = found.judge(6.0)  # NCCL over sockets on the seed pair
    assert flag is not None and "misconfigured" in flag


@pytest.mark.parametrize(
    ("model", "gpu", "nodes", "tok_s"),
    [
        ("meta-llama/Llama-3.1-70B-Instruct", "NVIDIA H100 80GB HBM3", 1, 3350 / 140),
        ("Qwen/Qwen3-8B", "NVIDIA GeForce RTX 5090", 1, 1792 / 16),
        ("nvidia/Llama-3.1-8b-Instruct-NVFP4", "NVIDIA H200", 1, 4800 / 4),
        ("nvidia/Llama-3.3-70B-Instruct-FP8", "NVIDIA H100 PCIe", 2, 2000 * 2 / 70),
    ],
)
def test_the_ceiling_reads_dtype_size_and_bandwidth_from_names(model, gpu, nodes, tok_s) -> None:
    found = ceiling(model, gpu, nodes)
    assert isinstance(found, Ceiling) and found.tok_s == pytest.approx(tok_s)


def test_no_ceiling_is_invented_where_a_fact_is_missing() -> None:
    assert (
        ceiling(SPARKS, "Some Future GPU", 2) == "no memory bandwidth known for GPU Some Future GPU"
    )
    assert ceiling("org/mystery-model", "NVIDIA GB10", 2) == (
        "no active parameter count in the model's name org/mystery-model"
    )
    # a mixture of experts whose name gives only its total: no dense guess, which would set
    # the ceiling far too low and call an honest figure a measurement error
    for moe in ("openai/gpt-oss-120b", "mistralai/Mixtral-8x7B-v0.1", "deepseek-ai/DeepSeek-V3"):
        assert isinstance(ceiling(moe, "NVIDIA H200", 1), str)


def test_under_a_hundred_requests_the_row_gives_the_mean_and_its_interval_not_percentiles() -> None:
    # one run of 13: the cached first left out, twelve at 500..610 ms, each token 50 ms apart
    (row,) = summarise([detailed([10.0, *(500.0 + 10 * i for i in range(12))], 50.0, c=4)])
    assert row.requests == 12 and row.ttft_ms == {"p50": None, "p90": None, "p99": None}
    assert row.ttft_mean_ms == pytest.approx(555.0) and row.ttft_mean_ci_ms is not None
    assert row.tpot_mean_ms == pytest.approx(50.0) and row.tok_s_per_user == pytest.approx(20.0)
    report = Report("vllm bench serve", [row], {}, "no GPU", None, method="quick",
                    unmeasured={16: "one run at c=16 needs ~90 s"})  # fmt: skip
    table = render_table(report)
    assert table.splitlines()[3].split()[:5] == [
        "4",
        "12",
        "555",
        "±",
        f"{row.ttft_mean_ci_ms:.0f}",
    ]
    assert "c=4 n=12: under 100 samples, so no percentiles" in table
    assert "c=16: NOT MEASURED in quick: one run at c=16 needs ~90 s" in table
