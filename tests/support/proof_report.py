"""What a story's proof must show: the engine's own benchmark over the default sweep, and a
replay or demo that ends with the report (headline, table, chart and data paths)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def chart_of(stdout: str) -> Path:
    """The chart file the report names."""
    return Path(stdout.strip().splitlines()[-2].removeprefix("chart: "))


def assert_engine_benchmark(report: dict[str, Any]) -> None:
    assert report["source"] == "vllm bench serve"
    rows = report["rows"]
    assert [(r["concurrency"], r["runs"]) for r in rows] == [(1, 3), (4, 3), (16, 3)]
    assert all(r["tok_s_per_user"] > 0 and r["requests"] >= 100 for r in rows)
    # quick: p50 and p90 of 100 pooled requests; a p99 needs 1,000 and is not made up
    assert all(r["ttft_ms"]["p90"] is not None and r["ttft_ms"]["p99"] is None for r in rows)
    assert report["method"].startswith("quick, ")
    assert rows[-1]["tok_s_aggregate"] > rows[0]["tok_s_aggregate"]
    assert report["ceiling"]["tok_s"] > rows[0]["tok_s_per_user"] and report["flag"] is None
    assert report["fingerprint"]["serve_command_hash"].startswith("sha256:")


def assert_ends_with_the_report(stdout: str) -> None:
    lines = stdout.strip().splitlines()
    assert lines[-2].startswith("chart: ") and lines[-1].startswith("data: ")
    tail = "\n".join(lines[-24:])
    assert "quick sweep: single stream" in tail and "proof: vllm bench serve" in tail
    assert "method: quick, " in tail
