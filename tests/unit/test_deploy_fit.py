"""The fit verdict, with its numbers, as a user reads it."""

from __future__ import annotations

from tools.checks.budget import NodeBudget
from tools.deploy.fit import GB, check_fit, size_from_du

TOTAL = 121 * GB


def test_seed_pair_does_not_fit_until_the_old_container_stops() -> None:
    verdict = check_fit(
        119 * GB,
        [
            NodeBudget("spark-a", 15 * GB, TOTAL, (("vllm_node", 98 * GB),)),
            NodeBudget("spark-b", 107 * GB, TOTAL),
        ],
        utilization=0.8,
    )
    assert not verdict.fits
    assert verdict.lines == [
        "119.0 GB over 2 nodes = 59.5 GB per node",
        "spark-a has 15.0 GB available while vllm_node runs (needs 59.5 GB + KV headroom at "
        "utilization 0.8) → does not fit until vllm_node is stopped",
        "spark-b: 107.0 GB available × 0.8 = 85.6 GB, 26.1 GB left for KV cache",
    ]
    assert verdict.blocking_containers == {"spark-a": ["vllm_node"]}


def test_fits_across_two_idle_nodes_but_not_one() -> None:
    two = check_fit(
        119 * GB, [NodeBudget("a", 110 * GB, TOTAL), NodeBudget("b", 110 * GB, TOTAL)], 0.8
    )
    one = check_fit(119 * GB, [NodeBudget("a", 110 * GB, TOTAL)], 0.8)
    assert two.fits and not one.fits
    assert one.lines[-1] == (
        "a has 110.0 GB available (needs 119.0 GB + KV headroom at utilization 0.8) → does not "
        "fit on this node"
    )
    assert one.blocking_containers == {}


def test_du_output_parses_and_errors_do_not() -> None:
    assert (
        size_from_du("119483648000\t/home/a/.cache/huggingface/hub/models--Qwen--X\n")
        == 119483648000
    )
    assert size_from_du("du: cannot access 'x': No such file or directory\n") is None
