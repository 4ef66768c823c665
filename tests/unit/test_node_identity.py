"""Each node's identity from what its engine container printed, and the check that the nodes
of one engine agree: a finding with its fix where a known value differs, none on unknowns."""

from __future__ import annotations

from datetime import UTC, datetime

from tools.deploy.proof.node_identity import (
    FIX_NCCL,
    UNKNOWN,
    NodeIdentity,
    disagreements,
    parse_build,
    parse_identity,
    plan_identities,
)
from tools.recon.image_probe import parse_contents
from tools.world.facts import DockerFacts, GpuFacts, HostFacts, Image, ImageContents

IMAGE = "nvcr.io/nvidia/vllm:26.05-py3"

DIGEST = (
    "nvcr.io/nvidia/vllm@sha256:777e013ec3db021481b6df22b00e73a4b0b210952d6d34c121f8a9f50c6f42f1"
)
WHEEL = "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2"
PRINTED = f"""@@image
ref nvcr.io/nvidia/vllm:26.05-py3
sha256:a41c7e90d2b3 ["{DIGEST}"]
@@nccl
NCCL version 2.28.9
NCCL build {WHEEL} NCCL version 2.28.9+cuda13.0 build-id a7f420a1d5c3e9b8
@@engine
Name: vllm
Version: 0.19.1+nv26.05
@@driver
580.95.05
@@firmware
28.45.4028
"""


def test_a_node_is_read_from_what_its_container_printed() -> None:
    found = parse_identity(PRINTED, NodeIdentity())
    assert found == NodeIdentity(
        image="nvcr.io/nvidia/vllm:26.05-py3",
        image_id="sha256:a41c7e90d2b3",
        image_digest=DIGEST,
        engine_version="vllm 0.19.1+nv26.05",
        nccl_build="2.28.9+cuda13.0 build-id a7f420a1d5c3e9b8",
        nccl_library=WHEEL,
        driver="580.95.05",
        firmware="28.45.4028",
    )


def test_parts_that_said_nothing_stay_unknown_or_as_known() -> None:
    text = "@@image\nref \n@@nccl\nbash: python3: command not found\n@@driver\n@@firmware\n"
    found = parse_identity(text, NodeIdentity(driver="580.95.05"))
    assert found.driver == "580.95.05"
    assert (found.image, found.image_id, found.nccl_build, found.firmware) == (UNKNOWN,) * 4


def test_a_locally_built_image_has_no_registry_digest() -> None:
    text = "@@image\nref scout/vllm:mine\nsha256:0f0e []\n"
    assert parse_identity(text, NodeIdentity()).image_digest.startswith("none")


def test_a_build_line_without_a_build_id_is_no_build() -> None:
    assert parse_build(f"NCCL build {WHEEL} NCCL version 2.28.9+cuda13.0 build-id unknown") is None
    assert parse_build("NCCL version 2.28.9") is None


def node(**kw: str) -> NodeIdentity:
    base = {
        "image_id": "sha256:a41c",
        "engine_version": "vllm 0.19.1",
        "driver": "580.95.05",
        "nccl_build": "2.28.9+cuda13.0 build-id c0db9360",
        "firmware": "28.45.4028",
    }
    return NodeIdentity(**{**base, **kw})


def test_two_nccl_builds_of_one_version_are_a_finding_with_the_fix() -> None:
    found = disagreements({"spark-a": node(nccl_build="2.28.9+cuda13.0 build-id a7f420a1"),
                           "spark-b": node()})  # fmt: skip
    assert [f.kind for f in found] == ["nccl_build_differs"]
    assert found[0].hosts == ["spark-a", "spark-b"]
    assert "a7f420a1" in found[0].message and "c0db9360" in found[0].message
    assert found[0].fix == FIX_NCCL


def test_every_field_that_differs_is_its_own_finding() -> None:
    nodes = {"a": node(), "b": node(driver="580.82.09", firmware="28.44.1036"), "c": node()}
    assert [f.kind for f in disagreements(nodes)] == ["driver_differs", "firmware_differs"]


def test_agreeing_or_unknown_values_are_no_finding() -> None:
    nodes = {"a": node(), "b": node(nccl_build=UNKNOWN, driver=UNKNOWN), "c": node()}
    assert disagreements(nodes) == []


def test_a_skipped_field_is_left_to_its_own_check() -> None:
    nodes = {"a": node(), "b": node(image_id="sha256:c93b")}
    assert [f.kind for f in disagreements(nodes)] == ["image_id_differs"]
    assert disagreements(nodes, skip=("image_id",)) == []


def facts(host: str, build: str | None, driver: str) -> HostFacts:
    contents = ImageContents(vllm="0.19.1+nv26.05", nccl="2.28.9", nccl_build=build)
    image = Image(repository="nvcr.io/nvidia/vllm", tag="26.05-py3", id="a41c", contents=contents)
    return HostFacts(
        host=host,
        collected_at=datetime(2026, 12, 6, tzinfo=UTC),
        docker=DockerFacts(images=[image]),
        gpu=GpuFacts(driver_version=driver),
    )


def test_the_plan_reads_each_nodes_build_and_driver_from_what_recon_knows() -> None:
    hosts = {
        "spark-a": facts("spark-a", "2.28.9+cuda13.0 build-id a7f420a1", "580.95.05"),
        "spark-b": facts("spark-b", "2.28.9+cuda13.0 build-id c0db9360", "580.95.05"),
        "spark-c": facts("spark-c", None, "580.95.05"),
    }
    found = plan_identities(hosts, ["spark-a", "spark-b", "spark-c"], IMAGE)
    assert found["spark-a"].engine_version == "vllm 0.19.1+nv26.05"
    assert found["spark-c"].nccl_build == UNKNOWN
    assert [f.kind for f in disagreements(found, skip=("image_id",))] == ["nccl_build_differs"]


def test_the_image_probe_keeps_the_build_line() -> None:
    said = (
        f"image {IMAGE}\nNCCL version 2.28.9\n"
        f"NCCL build {WHEEL} NCCL version 2.28.9+cuda13.0 build-id a7f420a1d5c3e9b8\n"
        "Name: vllm\nVersion: 0.19.1+nv26.05\n"
    )
    contents = parse_contents(said)[IMAGE]
    assert contents.nccl_build == "2.28.9+cuda13.0 build-id a7f420a1d5c3e9b8"
    assert contents.words() == "vllm 0.19.1+nv26.05, nccl 2.28.9, no ray/sglang"
