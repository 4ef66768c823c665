"""Recon at fleet size: hosts with the same facts shown once, repeated findings said once."""

from __future__ import annotations

import io

from rich.console import Console

from agent.world.grouping import name_span
from agent.world.model import WorldModel
from agent.world.render import COMPACT_LIMIT_CHARS, render_compact
from agent.world.tables import grouping_data, print_tables
from sim.fleet import column_letters
from tests.support.sparks import VLLM_NODE as VLLM
from tests.support.sparks import one_port_spark as spark
from tools.checks import GB, Finding


def names(count: int) -> list[str]:
    return [f"spark-{column_letters(i)}" for i in range(count)]


def fleet_world(count: int, *, link_up: bool = False, **bends: dict) -> WorldModel:
    """The seed's story at scale: a head with the old container, `count - 1` identical workers
    (their own hostname and fabric address), each worker bent by `bends[name]` if given."""
    world = WorldModel()
    facts = {"spark-a": spark("spark-a", available_gb=15, containers=[VLLM])}
    for i, name in enumerate(names(count)[1:]):
        kwargs = {"link_up": link_up, "address": f"192.168.100.{11 + i}/24"}
        facts[name] = spark(name, **(kwargs | bends.get(name, {})))
    world.apply_round(facts, {})
    world.set_model_size(119 * GB)
    return world


def test_host_names_are_spans_of_consecutive_hosts() -> None:
    order = names(32)
    assert name_span(order[1:], order) == "spark-b … spark-af"
    assert name_span(["spark-a", "spark-b", "spark-c", "spark-d", "spark-f", "spark-g"], order) == (
        "spark-a … spark-d, spark-f, spark-g"
    )


def test_a_pair_reads_as_two_hosts_even_when_they_are_alike() -> None:
    text = render_compact(fleet_world(2, link_up=True))
    assert text.startswith("spark-a (spark-a-x) aarch64")
    assert "\nspark-b (spark-b-x) aarch64" in text and "hosts" not in text


def test_thirty_one_identical_workers_are_one_block_and_one_finding() -> None:
    pair, fleet = render_compact(fleet_world(2)), render_compact(fleet_world(32))
    assert len(fleet) <= 2 * len(pair)
    group = "spark-b … spark-af (31 hosts; differ in: hostname) aarch64 · Ubuntu 24.04.3 LTS"
    assert group in fleet
    assert fleet.count("NVIDIA GB10") == 2 and "spark-q (" not in fleet
    assert "per host: spark-b spark-b-x; spark-c spark-c-x;" in fleet
    assert 'more (recon with hosts=["NAME", …] shows those hosts one by one)' in fleet
    assert "[blocker] RoCE link down on 31 hosts (spark-b … spark-af): no ConnectX port" in fleet
    assert fleet.count("RoCE link down") == 1
    assert "[warning] container vllm_node holds ~98 GB on spark-a" in fleet


def test_a_host_that_differs_is_shown_apart_and_addresses_are_per_host() -> None:
    world = fleet_world(8, link_up=True, **{"spark-e": {"driver": "580.126.09"}})
    text = render_compact(world)
    assert "spark-b … spark-d, spark-f … spark-h (6 hosts; differ in: hostname, addresses)" in text
    assert "Up 200G (address per host)" in text
    assert "spark-b spark-b-x 192.168.100.11/24" in text
    assert "\nspark-e (spark-e-x) aarch64" in text and "driver 580.126.09" in text


def test_the_text_has_a_bound_and_says_what_it_left_out() -> None:
    bends = {name: {"driver": f"580.{i}.01"} for i, name in enumerate(names(64))}
    text = render_compact(fleet_world(64, **bends))
    assert len(text) <= COMPACT_LIMIT_CHARS
    assert text.startswith("spark-a (spark-a-x)")
    left_out = next(line for line in text.splitlines() if "not shown to keep this short" in line)
    assert left_out.startswith("(") and "… spark-bl)" in left_out
    assert 'recon with hosts=["NAME", …] shows those hosts one by one' in left_out
    assert "[warning] container vllm_node holds ~98 GB on spark-a" in text


def test_tables_and_json_group_the_same_way() -> None:
    world = fleet_world(32)
    out = io.StringIO()
    print_tables(world, Console(file=out, width=250, color_system=None))
    tables = out.getvalue()
    assert "spark-b … spark-af (31 hosts)" in tables and "(per host)" in tables
    assert "│ spark-q " not in tables
    assert "RoCE link down on 31 hosts (spark-b … spark-af)" in tables
    data = grouping_data(world)
    groups = [g for g in data["host_groups"] if len(g["hosts"]) > 1]
    assert groups == [{"hosts": names(32)[1:], "differ_in": ["hostname"]}]
    roce = [f for f in data["findings"] if "RoCE link down" in f["message"]]
    assert len(roce) == 1 and roce[0]["hosts"] == names(32)[1:]


def test_new_findings_after_a_recon_fall_under_the_same_bound() -> None:
    world = fleet_world(64)
    fresh = [
        Finding(
            severity="warning",
            check="docker",
            kind="odd_container",
            hosts=[name],
            message=f"container job-{i} restarted {i + 3} times on {name}",
        )
        for i, name in enumerate(names(64))
    ]
    world.findings = [*world.findings, *fresh]
    text = world.describe(names(64), new=fresh)
    assert len(text) <= COMPACT_LIMIT_CHARS
    new_part = text[text.index("new since the last recon:") :].splitlines()
    assert new_part[-1].startswith("  (+") and "more new, among the findings above)" in new_part[-1]
    assert "[blocker] a ~119 GB model cannot start while vllm_node holds ~98 GB" in text
    small = fleet_world(2)
    assert small.describe(names(2), new=small.findings[:1]).endswith(
        "new since the last recon:\n  " + f"[{small.findings[0].severity}] {small.findings[0].text}"
    )
