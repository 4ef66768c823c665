"""The NCCL a ring of Sparks needs (2.30 or later, docs/sources.md §9): the line the
ring's check step wants, read as versions compare, and the plan's answer per probed version."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from tools.deploy.fabric.paths import FabricPath
from tools.deploy.fabric.ring_nccl import RING_NCCL_LINE, ring_nccl
from tools.world.facts import DockerFacts, HostFacts, Image, ImageContents

IMAGE = "nvcr.io/nvidia/vllm:26.05-py3"
NODES = ["spark-a", "spark-b", "spark-c"]
NOW = datetime(2026, 12, 4, tzinfo=UTC)


@pytest.mark.parametrize(
    ("version", "enough"),
    [
        ("2.30.3", True), ("2.30.7", True), ("2.31.2", True), ("2.32.6", True),
        ("2.100.1", True), ("3.0.0", True), ("10.1.0", True),
        ("2.28.9", False), ("2.29.7", False), ("2.3.0", False), ("2.3.10", False),
        ("1.30.0", False), ("2.18.3", False),
    ],
)  # fmt: skip
def test_the_ring_check_wants_nccl_2_30_or_later(version: str, enough: bool) -> None:
    said = f"NCCL version {version}\n"
    assert (re.search(RING_NCCL_LINE, said, re.M) is not None) is enough


def _hosts(nccl: str | None) -> dict[str, HostFacts]:
    contents = ImageContents(vllm="0.20.1", nccl=nccl)
    image = Image(repository="nvcr.io/nvidia/vllm", tag="26.05-py3", contents=contents)
    return {
        h: HostFacts(host=h, collected_at=NOW, docker=DockerFacts(images=[image])) for h in NODES
    }


def _ring() -> dict[str, FabricPath]:
    return {
        h: FabricPath(host=h, netdev="enp1s0f0np0", ip=None, hcas=(), link_up=True, routed=True)
        for h in NODES
    }


def test_a_probed_nccl_too_old_for_the_ring_stops_the_plan() -> None:
    old = ring_nccl(_hosts("2.28.9"), NODES, NODES, _ring(), IMAGE)
    assert [f.kind for f in old.blockers] == ["nccl_too_old_for_ring"] and not old.steps
    assert "NCCL is 2.28.9" in old.blockers[0].message
    new = ring_nccl(_hosts("2.30.3"), NODES, NODES, _ring(), IMAGE)
    assert not new.blockers and not new.steps and "2.30.3 routes by subnet" in new.notes[0]


def test_an_unprobed_image_is_asked_before_the_engine() -> None:
    unknown = ring_nccl(_hosts(None), NODES, NODES, _ring(), IMAGE)
    assert [s.id for s in unknown.steps] == ["nccl-check:spark-a"] and not unknown.blockers
    assert unknown.steps[0].check.expect == RING_NCCL_LINE
