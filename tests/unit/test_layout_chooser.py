"""The layout chooser over synthetic nodes: which nodes, which split, and the reason it gives."""

from __future__ import annotations

import ipaddress

import pytest

from tests.support.hgx import h100_node
from tests.support.sparks import spark_ring
from tools.checks import GB
from tools.checks.budget import NodeBudget, budgets_for
from tools.checks.fabric import PairLink, pair_link
from tools.checks.layout import LayoutError, LayoutRequest, choose_layout

TOTAL = 128 * GB
SUBNET = ipaddress.ip_network("192.168.100.0/24")


def idle(host: str, available_gb: float = 126, gpus: int = 1) -> NodeBudget:
    return NodeBudget(host, round(available_gb * GB), TOTAL * gpus, (), gpus)


def mesh(*missing: tuple[str, str], state: str = "none"):
    """Every pair on one subnet except `missing` pairs, which get `state`."""
    apart = {frozenset(pair) for pair in missing}

    def links(a: str, b: str) -> PairLink:
        if frozenset((a, b)) in apart:
            return PairLink(state)  # type: ignore[arg-type]
        return PairLink("up", SUBNET)

    return links


def test_fewest_nodes_that_hold_the_model_and_why() -> None:
    nodes = [idle("spark-a"), idle("spark-b"), idle("spark-c")]
    layout = choose_layout(LayoutRequest(119 * GB), nodes, mesh())
    assert layout.hosts == ("spark-a", "spark-b") and layout.fits
    assert (layout.tensor_parallel, layout.pipeline_parallel) == (2, 1)
    assert layout.reason == (
        "2 of 3 nodes: with KV headroom the ~119 GB model needs ~131 GB per node on 1 and "
        "~65 GB on 2, and a node gives at most ~101 GB (available × 0.8); spark-a (head) and "
        "spark-b share the fabric subnet 192.168.100.0/24; TP=2: tensor parallelism across 2 "
        "nodes, one GPU each"
    )


def test_the_head_is_always_used_and_its_container_must_stop() -> None:
    head = NodeBudget("spark-a", 29 * GB, TOTAL, (("vllm_node", 98 * GB),))
    workers = [idle(f"spark-{c}", 110) for c in "bcdefgh"]
    layout = choose_layout(LayoutRequest(119 * GB), [head, *workers], mesh())
    assert layout.hosts == ("spark-a", "spark-b")
    assert layout.stops == {"spark-a": ["vllm_node"]} and layout.fits


def test_workers_that_fit_now_and_reach_the_head_come_first() -> None:
    busy = NodeBudget("spark-b", 20 * GB, TOTAL, (("old", 90 * GB),))
    nodes = [idle("spark-a"), busy, idle("spark-c"), idle("spark-d")]
    links = mesh(("spark-a", "spark-c"))  # c has addresses, but on no subnet the head has
    layout = choose_layout(LayoutRequest(119 * GB), nodes, links)
    assert layout.hosts == ("spark-a", "spark-d") and not layout.stops


def test_three_nodes_are_taken_so_that_every_pair_can_talk() -> None:
    nodes = [idle(f"spark-{c}", 60) for c in "abcd"]
    layout = choose_layout(LayoutRequest(119 * GB), nodes, mesh(("spark-b", "spark-c")))
    assert layout.hosts == ("spark-a", "spark-b", "spark-d")


def test_an_odd_count_of_single_gpu_nodes_runs_as_pipeline_stages() -> None:
    nodes = [idle(f"spark-{c}", 60) for c in "abc"]
    layout = choose_layout(LayoutRequest(119 * GB), nodes, mesh())
    assert (layout.tensor_parallel, layout.pipeline_parallel) == (1, 3)
    assert layout.label == "TP=1 × PP=3"
    assert "a TP size must divide the model's attention heads" in layout.why_split
    no_pp = choose_layout(LayoutRequest(119 * GB, pipeline_ok=False), nodes, mesh())
    assert (no_pp.tensor_parallel, no_pp.pipeline_parallel) == (3, 1)


def test_eight_gpu_nodes_take_tp_within_and_pp_across() -> None:
    nodes = [idle("h100-a", 648, gpus=8), idle("h100-b", 648, gpus=8)]
    big = choose_layout(LayoutRequest(700 * GB), nodes, mesh())
    assert (big.hosts, big.tensor_parallel, big.pipeline_parallel) == (
        ("h100-a", "h100-b"),
        8,
        2,
    )
    assert "TP = GPUs per node, PP = nodes" in big.why_split
    assert "TP=16 over all GPUs works too when asked" in big.why_split
    small = choose_layout(LayoutRequest(119 * GB), nodes, mesh())
    assert (small.hosts, small.tensor_parallel, small.pipeline_parallel) == (("h100-a",), 8, 1)
    assert small.reason.startswith("1 of 2 nodes: ~131 GB with KV headroom fits in h100-a's")


def test_tp_over_all_gpus_when_asked_says_what_crosses_the_fabric() -> None:
    nodes = [idle("h100-a", 648, gpus=8), idle("h100-b", 648, gpus=8)]
    layout = choose_layout(LayoutRequest(119 * GB, tensor_parallel=16), nodes, mesh())
    assert (layout.hosts, layout.tensor_parallel, layout.pipeline_parallel) == (
        ("h100-a", "h100-b"),
        16,
        1,
    )
    assert layout.why_split == "as asked; every layer's all-reduce crosses the fabric between nodes"
    assert layout.why_nodes.startswith("2 of 2 nodes as asked")


def test_nodes_asked_for_are_used_even_when_fewer_would_do() -> None:
    nodes = [idle(f"spark-{c}") for c in "abcd"]
    layout = choose_layout(LayoutRequest(119 * GB, nodes=4), nodes, mesh())
    assert layout.hosts == ("spark-a", "spark-b", "spark-c", "spark-d")
    assert layout.tensor_parallel == 4


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (
            LayoutRequest(119 * GB, nodes=5),
            "5 nodes asked for, but only 4 hosts with 1 GPU(s) each (like the head) can serve",
        ),
        (
            LayoutRequest(119 * GB, nodes=3, tensor_parallel=2),
            "TP×PP = 2 GPUs fills 2 node(s) of 1 GPUs, not the 3 asked for",
        ),
    ],
)
def test_impossible_requests_say_why(request_: LayoutRequest, message: str) -> None:
    nodes = [idle(f"spark-{c}") for c in "abcd"]
    with pytest.raises(LayoutError, match=message.replace("(", r"\(").replace(")", r"\)")):
        choose_layout(request_, nodes, mesh())


def test_a_split_that_is_not_whole_nodes_is_refused() -> None:
    nodes = [idle("h100-a", 648, gpus=8), idle("h100-b", 648, gpus=8)]
    with pytest.raises(LayoutError, match="12 GPUs is not a whole number of 8-GPU nodes"):
        choose_layout(
            LayoutRequest(119 * GB, tensor_parallel=4, pipeline_parallel=3), nodes, mesh()
        )


def test_when_nothing_fits_every_node_and_the_short_ones_are_named() -> None:
    head = NodeBudget("spark-a", 5 * GB, TOTAL)
    layout = choose_layout(LayoutRequest(119 * GB), [head, idle("spark-b")], mesh())
    assert not layout.fits
    assert layout.hosts == ("spark-a", "spark-b") and layout.short == ("spark-a",)


def test_the_ring_of_three_sparks_is_connected_pair_by_pair() -> None:
    ring = spark_ring()
    links = {
        (a, b): pair_link(ring[a], ring[b])
        for a, b in [("spark-a", "spark-b"), ("spark-b", "spark-c"), ("spark-a", "spark-c")]
    }
    assert {pair: (link.state, str(link.subnet)) for pair, link in links.items()} == {
        ("spark-a", "spark-b"): ("up", "192.168.0.0/24"),
        ("spark-b", "spark-c"): ("up", "192.168.2.0/24"),
        ("spark-a", "spark-c"): ("up", "192.168.1.0/24"),
    }
    layout = choose_layout(
        LayoutRequest(200 * GB),
        budgets_for(ring, list(ring)),
        lambda a, b: pair_link(ring[a], ring[b]),
    )
    assert layout.hosts == ("spark-a", "spark-b", "spark-c")
    assert "every pair shares a fabric subnet of its own (one per cable)" in layout.why_nodes


def test_h100_facts_give_eight_gpus_per_node() -> None:
    hosts = {"h100-a": h100_node("h100-a", 11), "h100-b": h100_node("h100-b", 12)}
    budgets = budgets_for(hosts, list(hosts))
    assert [b.gpus for b in budgets] == [8, 8]
    layout = choose_layout(
        LayoutRequest(700 * GB), budgets, lambda a, b: pair_link(hosts[a], hosts[b])
    )
    assert layout.label == "TP=8 × PP=2"
    assert layout.why_nodes.endswith("share the fabric subnet 10.10.0.0/24")


def test_nodes_of_another_shape_than_the_head_are_not_mixed_in() -> None:
    nodes = [idle("spark-a", 60), idle("h100-x", 648, gpus=8), idle("spark-b", 60)]
    layout = choose_layout(LayoutRequest(500 * GB), nodes, mesh())
    assert layout.hosts == ("spark-a", "spark-b") and not layout.fits
    assert layout.of_nodes == 3
