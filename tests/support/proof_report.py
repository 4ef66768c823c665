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
    # quick fits ~2 minutes of the engine's time: every level of the default sweep is measured
    # or named as not, and the first always is
    measured = [r["concurrency"] for r in rows]
    unmeasured = [int(c) for c in report.get("unmeasured", {})]
    assert measured[0] == 1 and sorted(measured + unmeasured) == [1, 4, 16]
    assert all(r["tok_s_per_user"] > 0 and 1 <= r["runs"] <= 3 for r in rows)
    for r in rows:  # p50/p90 on 100 pooled requests or more; under 100 none, the mean instead
        if r["requests"] >= 100:
            assert r["ttft_ms"]["p90"] is not None and r.get("ttft_mean_ms") is None
        else:
            assert set(r["ttft_ms"].values()) == {None} and r["ttft_mean_ms"] is not None
        assert r["ttft_ms"]["p99"] is None  # a p99 needs 1,000 and is not made up
    assert report["method"].startswith("quick, ")
    assert len(rows) == 1 or rows[-1]["tok_s_aggregate"] > rows[0]["tok_s_aggregate"]
    assert report["ceiling"]["tok_s"] > rows[0]["tok_s_per_user"] and report["flag"] is None
    assert report["fingerprint"]["serve_command_hash"].startswith("sha256:")


def assert_ends_with_the_report(stdout: str) -> None:
    lines = stdout.strip().splitlines()
    assert lines[-2].startswith("chart: ") and lines[-1].startswith("data: ")
    tail = "\n".join(lines[-24:])
    assert "quick sweep: single stream" in tail and "proof: vllm bench serve" in tail
    assert "method: quick, " in tail
