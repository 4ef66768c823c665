"""Which percentiles a sample can carry, and the run-to-run interval."""

from __future__ import annotations

import pytest

from tools.deploy.proof.bench_pooling import ci95, percentiles, pooled, reportable


@pytest.mark.parametrize(
    ("p", "samples", "ok"),
    [(50, 99, False), (50, 100, True), (90, 100, True), (90, 99, False), (99, 999, False),
     (99, 1000, True), (99.9, 10_000, True), (99.9, 9_999, False)],
)  # fmt: skip
def test_a_percentile_rests_on_a_hundred_samples_and_ten_beyond_it(p, samples, ok) -> None:
    assert reportable(p, samples) is ok


def test_a_percentile_that_cannot_be_carried_is_none_not_the_largest_value() -> None:
    eight = [float(v) for v in range(8)]
    assert percentiles(eight, (50, 90, 99)) == {"p50": None, "p90": None, "p99": None}
    hundred = [float(v) for v in range(100)]
    assert percentiles(hundred, (50, 90, 99)) == {"p50": 49.5, "p90": pytest.approx(89.1),
                                                   "p99": None}  # fmt: skip


def test_the_interval_widens_with_few_runs() -> None:
    assert ci95([10.0]) is None
    assert ci95([10.0, 12.0]) == pytest.approx(12.706 * 2**0.5 / 2**0.5)
    assert ci95([10.0, 12.0, 10.0, 12.0]) < ci95([10.0, 12.0])


def test_runs_without_per_request_timings_are_not_pooled() -> None:
    assert pooled([{"ttfts": [0.1], "itls": [[]], "output_lens": [1], "latencies": [0.1]},
                   {"p50_ttft_ms": 100.0}]) is None  # fmt: skip


def test_failed_requests_are_left_out_of_the_pool() -> None:
    run = {"ttfts": [0.01, 0.5, 0.6], "itls": [[0.1], [0.1], [0.1]], "output_lens": [2, 2, 2],
           "latencies": [0.11, 0.6, 0.7], "errors": ["", "", "timeout"]}  # fmt: skip
    pool = pooled([run])
    assert pool is not None and pool.ttft == [500.0] and pool.left_out == 1
