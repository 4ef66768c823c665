"""The world model: facts per host with their age, notes apart from facts, JSON, renderings."""

from __future__ import annotations

import io
from datetime import timedelta

from rich.console import Console

from agent.world.model import WorldModel, transcript_listener
from agent.world.render import render_compact
from agent.world.tables import print_tables
from tests.support.sparks import NOW, VLLM_NODE, one_port_spark
from tools.checks import GB
from tools.world.facts import Image, ImageContents

COMPACT_LIMIT_BYTES = 3 * 1024


def seed_world() -> WorldModel:
    world = WorldModel()
    world.update("spark-a", one_port_spark("spark-a", available_gb=15, containers=[VLLM_NODE]))
    world.update("spark-b", one_port_spark("spark-b", link_up=False, address="192.168.100.11/24"))
    world.set_model_size(119 * GB)
    return world


def test_age_and_staleness_follow_collected_at() -> None:
    world = seed_world()
    later = NOW + timedelta(seconds=700)
    assert world.age("spark-a", now=later) == 700
    assert world.is_stale("spark-a", max_age_s=600, now=later)
    assert not world.is_stale("spark-a", max_age_s=600, now=NOW + timedelta(seconds=10))
    assert world.stale_hosts(["spark-a", "spark-c"], 600, now=NOW) == ["spark-c"]
    assert world.age("spark-c") is None


def test_update_reports_new_findings_and_tells_the_listener() -> None:
    seen = []
    world = WorldModel(
        on_change=lambda host, summary, new: seen.append((host, summary, [f.kind for f in new]))
    )
    new = world.update("spark-a", one_port_spark("spark-a", containers=[VLLM_NODE]))
    assert "container_holds_memory" in [f.kind for f in new]
    assert seen[0][:2] == ("spark-a", "probed spark-a")
    assert world.update("spark-a", one_port_spark("spark-a", containers=[VLLM_NODE])) == []


def test_notes_are_kept_apart_from_probed_facts() -> None:
    world = seed_world()
    world.add_note("enp1s0f1np1 is the cabled port", "ibdev2netdev shows it Up", host="spark-a")
    text = render_compact(world)
    facts_part, _, notes_part = text.partition("notes (model beliefs, not probed):")
    assert "cabled port" not in facts_part
    assert "spark-a: enp1s0f1np1 is the cabled port [ibdev2netdev shows it Up]" in notes_part


def test_json_round_trips_and_schema_names_the_groups() -> None:
    world = seed_world()
    again = WorldModel.model_validate_json(world.model_dump_json())
    assert again.hosts["spark-a"].docker.containers[0].name == "vllm_node"
    assert [f.message for f in again.findings] == [f.message for f in world.findings]
    schema = WorldModel.model_json_schema()
    assert {"HostFacts", "MemoryFacts", "Finding", "Note", "Provenance"} <= set(schema["$defs"])


def test_compact_seed_pair_fits_in_3kb_with_the_key_facts() -> None:
    text = render_compact(seed_world())
    assert len(text.encode()) <= COMPACT_LIMIT_BYTES
    assert text.count("NVIDIA GB10") == 2 and "580.95.05" in text and "CUDA 13.0" in text
    assert "vllm_node [vllm-node] Up 7 weeks, holds ~98 GB" in text
    assert "fabric: NO PORT UP" in text
    assert "[blocker] a ~119 GB model cannot start while vllm_node holds ~98 GB on spark-a" in text


def test_unreachable_host_is_shown_with_its_reason() -> None:
    world = seed_world()
    world.apply_round({}, {"spark-b": "cannot reach spark-b through spark-a"})
    assert "spark-b: UNREACHABLE — cannot reach spark-b through spark-a" in render_compact(world)


def test_tables_for_people() -> None:
    out = io.StringIO()
    print_tables(seed_world(), Console(file=out, width=200, color_system=None))
    text = out.getvalue()
    for title in ("hosts", "containers", "fabric (RDMA ports)", "findings"):
        assert title in text
    assert "vllm_node" in text and "~98 GB" in text and "DOWN DISABLED" in text


def test_changes_become_world_update_events() -> None:
    events = []
    world = WorldModel(on_change=transcript_listener(events.append))
    world.update("spark-a", one_port_spark("spark-a", containers=[VLLM_NODE]))
    assert events[0].type == "world_update" and events[0].host == "spark-a"
    assert "container vllm_node holds ~98 GB on spark-a" in [
        f["message"] for f in events[0].findings
    ]


def test_what_an_image_runs_joins_its_host_even_when_pulled_after_recon() -> None:
    seen = []
    world = WorldModel(on_change=lambda host, summary, new: seen.append((host, summary)))
    world.update("spark-b", one_port_spark("spark-b"))
    world.hosts["spark-b"].docker.images = []  # recon saw no image on spark-b
    seen.clear()
    world.record_image_contents(
        "spark-b", "nvcr.io/nvidia/vllm:26.05-py3", ImageContents(vllm="0.19.1+nv26.05")
    )
    [image] = world.hosts["spark-b"].docker.images
    assert (image.repository, image.tag) == ("nvcr.io/nvidia/vllm", "26.05-py3")
    text = render_compact(world)
    assert "image nvcr.io/nvidia/vllm:26.05-py3: vllm 0.19.1+nv26.05, no ray/sglang" in text
    assert seen == [
        ("spark-b", "image nvcr.io/nvidia/vllm:26.05-py3 on spark-b asked what it runs")
    ]


def test_a_reprobe_keeps_what_an_image_was_found_to_run() -> None:
    world = WorldModel()
    world.update("spark-a", one_port_spark("spark-a"))
    world.hosts["spark-a"].docker.images = []  # pulled after recon: its ID not seen yet
    contents = ImageContents(vllm="0.19.1+nv26.05")
    world.record_image_contents("spark-a", "nvcr.io/nvidia/vllm:26.05-py3", contents)
    again = one_port_spark("spark-a")  # recon again: the image listed with its ID, not asked
    again.docker.images = [Image(repository="nvcr.io/nvidia/vllm", tag="26.05-py3", id="a41c")]
    world.update("spark-a", again)
    assert world.hosts["spark-a"].docker.images[0].contents == contents
    other = one_port_spark("spark-a")  # an image recon sees for the first time stays unknown
    other.docker.images = [Image(repository="vllm-node", tag="latest", id="3b1e")]
    world.update("spark-a", other)
    assert world.hosts["spark-a"].docker.images[0].contents is None
