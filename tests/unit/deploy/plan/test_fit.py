"""The fit verdict, with its numbers, as a user reads it."""

from __future__ import annotations

from tools.checks.budget import NodeBudget, default_utilization
from tools.deploy.launch.engine_settings import choose_max_model_len
from tools.deploy.plan.fit import GB, check_fit, size_from_du

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


GIB = 1024**3
SPARK_TOTAL = round(121.69 * GIB)  # what vLLM reports on a GB10


def test_unified_memory_counts_what_cuda_can_allocate_not_memavailable() -> None:
    """One owner found CUDA capped at ~102 of 121.69 GiB with 118 GiB MemAvailable."""
    idle = NodeBudget("a", 118 * GIB, SPARK_TOTAL, unified=True)
    assert round(idle.allocatable() / GIB) == 102
    assert idle.usable(0.8) == SPARK_TOTAL * 0.8  # 0.8 × total fits under the cap
    assert round(idle.usable(0.9) / GIB) == 102  # 0.9 × total would not: capped
    assert default_utilization([idle]) == 0.8
    busy = NodeBudget("b", 90 * GIB, SPARK_TOTAL, unified=True)
    assert default_utilization([idle, busy]) == 0.72  # 90/121.69 = 0.7396, less the margin
    assert NodeBudget("h100", 80 * GB, 80 * GB).usable(0.8) == 64 * GB  # discrete: unchanged


def test_max_model_len_follows_the_kv_cache_left() -> None:
    roomy, why = choose_max_model_len(40 * GB, 2, None)
    # 160 KiB a token per node at TP=2, 4 sequences: 32768 tokens take 21.5 GB, 65536 take 42.9
    assert roomy == 32768 and "holds 4 sequences of 32768 tokens" in why
    tight, _ = choose_max_model_len(2 * GB, 2, None)
    assert tight == 2048
    asked, why = choose_max_model_len(40 * GB, 2, 4096)
    assert asked == 4096 and why.endswith("(as asked)")
