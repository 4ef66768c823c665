"""The proof's report from a real `vllm bench serve` result file, and the physics flag both ways."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.deploy.bench_report import Report, render_table, summarise, to_json
from tools.deploy.engine_bench import parse_results
from tools.deploy.physics import Ceiling, ceiling

FIXTURE = Path(__file__).parent.parent / "fixtures" / "bench"
REAL = json.loads((FIXTURE / "vllm_bench_serve_0.20.0_qwen3_8b_c1.json").read_text())
SPARKS = "Qwen/Qwen3.5-122B-A10B-FP8"


def test_a_real_result_file_becomes_a_row_with_what_it_holds_and_no_more() -> None:
    (row,) = summarise([REAL])
    assert (row.concurrency, row.runs) == (1, 1)
    assert row.ttft_ms == {"p50": pytest.approx(20.0765, abs=1e-3), "p90": None,
                           "p99": pytest.approx(20.1511, abs=1e-3)}  # fmt: skip
    assert row.itl_ms["p99"] == pytest.approx(11.6300, abs=1e-3)
    assert row.tpot_ms == {"p50": None, "p90": None, "p99": None}  # it saved no TPOT
    assert row.tok_s_per_user is None and row.goodput_req_s is None
    assert row.tok_s_aggregate == pytest.approx(84.619, abs=1e-3)
    assert row.req_s == pytest.approx(5.2887, abs=1e-3)
    table = render_table(Report("vllm bench serve", [row], {}, "no GPU", None))
    assert table.splitlines()[2].split()[:3] == ["1", "20/–/20", "–/–/–"]


def test_runs_are_summed_up_by_their_median_and_their_spread() -> None:
    runs = [{**REAL, "output_throughput": v, "seed": i} for i, v in enumerate((80.0, 100.0, 90.0))]
    other = {**REAL, "max_concurrency": 4, "output_throughput": 200.0}
    rows = summarise([*runs, other])
    assert [(r.concurrency, r.runs) for r in rows] == [(1, 3), (4, 1)]
    assert rows[0].tok_s_aggregate == 90.0 and rows[0].spread_pct == pytest.approx(100 * 20 / 90)
    data = to_json(Report("vllm bench serve", rows, {"ttft": 2000.0}, "no GPU", None))
    assert data["rows"][1]["tok_s_aggregate"] == 200.0
    assert data["ceiling"] == {"unstated": "no GPU"}


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
