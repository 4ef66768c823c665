"""Crafted DGX Spark facts for the deployment tests, and the fabric each pair yields."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tools.deploy.fabric import FabricError, cage_key, find_fabric
from tools.recon.facts import (
    Container,
    Disk,
    DiskFacts,
    DockerFacts,
    Gpu,
    GpuFacts,
    HostFacts,
    Image,
    InferenceServer,
    Interface,
    MemoryFacts,
    NetworkFacts,
    OsFacts,
    RdmaFacts,
    RdmaPort,
    ServiceFacts,
)

GB = 1_000_000_000
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
VLLM_IMAGE = Image(repository="nvcr.io/nvidia/vllm", tag="26.05-py3")
SGLANG_IMAGE = Image(repository="lmsysorg/sglang", tag="latest-cu130")
VLLM_NODE = Container(
    name="vllm_node",
    image="vllm-node",
    state="running",
    status="Up 7 weeks",
    memory_bytes=98 * GB,
    memory_source="docker stats",
)


def spark(
    host: str,
    octet: int,
    *,
    cage: str = "f1np1",
    link_up: bool = True,
    available_gb: float = 110,
    containers: list[Container] | None = None,
    images: list[Image] | None = None,
    listening: list[int] | None = None,
    driver: str = "580.95.05",
    rdma: bool = True,
) -> HostFacts:
    """A Spark with one cabled cage (`cage`): netdev + twin, both RDMA devices, 192.168.100.x."""
    nics = [Interface(name="enP7s7", state="UP", addresses=[f"10.0.0.{octet}/24"])]
    ports = []
    for domain, subnet in (("enp1s0", 100), ("enP2p1s0", 101)):
        for c in ("f0np0", "f1np1"):
            cabled = c == cage
            up = cabled and link_up
            nics.append(
                Interface(
                    name=f"{domain}{c}",
                    state="UP" if up else "DOWN",
                    addresses=[f"192.168.{subnet}.{octet}/24"] if up else [],
                    speed_mbps=200_000 if up else None,
                    fabric=True,
                )
            )
            device = ("rocep1s0" if domain == "enp1s0" else "roceP2p1s0") + c.split("np")[0]
            ports.append(
                RdmaPort(
                    device=device,
                    port=1,
                    state="ACTIVE" if up else "DOWN",
                    physical_state="LINK_UP" if up else "DISABLED",
                    netdev=f"{domain}{c}",
                    up=up,
                )
            )
    servers = [InferenceServer(kind="vllm", port=8000, container="vllm_node")]
    return HostFacts(
        host=host,
        collected_at=NOW,
        os=OsFacts(pretty_name="Ubuntu 24.04.3 LTS", dgx_ota_version="7.3.1"),
        memory=MemoryFacts(
            total_bytes=130_663_165_952,
            available_bytes=round(available_gb * GB),
            unified_memory=True,
        ),
        gpu=GpuFacts(
            driver_version=driver,
            cuda_version="13.0",
            gpus=[Gpu(index=0, name="NVIDIA GB10", memory_supported=False)],
        ),
        disk=DiskFacts(
            disks=[
                Disk(
                    mount="/",
                    filesystem="/dev/nvme0n1p2",
                    size_bytes=4000 * GB,
                    available_bytes=3700 * GB,
                )
            ]
        ),
        docker=DockerFacts(
            installed=True,
            usable=True,
            containers=containers or [],
            images=[VLLM_IMAGE, SGLANG_IMAGE] if images is None else images,
        ),
        rdma=RdmaFacts(ports=ports if rdma else []),
        network=NetworkFacts(interfaces=nics if rdma else nics[:1]),
        services=ServiceFacts(
            listening_ports=listening or [22],
            inference_servers=servers if listening and 8000 in listening else [],
        ),
    )


def reference_pair() -> dict[str, HostFacts]:
    """The seed pair after RoCE is up and vllm_node is gone: cage p1 on both, .10/.11."""
    return {"spark-a": spark("spark-a", 10), "spark-b": spark("spark-b", 11)}


def seed_pair() -> dict[str, HostFacts]:
    """The seed pair as found: vllm_node holds ~98 GB on the head, the worker's link is down."""
    return {
        "spark-a": spark(
            "spark-a", 10, available_gb=15, containers=[VLLM_NODE], listening=[22, 8000]
        ),
        "spark-b": spark("spark-b", 11, link_up=False, available_gb=107),
    }


def test_reference_pair_uses_cage_p1_with_both_twins() -> None:
    fabric = find_fabric(reference_pair(), ["spark-a", "spark-b"])
    head, worker = fabric["spark-a"], fabric["spark-b"]
    assert (head.netdev, head.ip, head.hcas) == (
        "enp1s0f1np1",
        "192.168.100.10",
        ("rocep1s0f1", "roceP2p1s0f1"),
    )
    assert (worker.netdev, worker.ip, worker.link_up) == ("enp1s0f1np1", "192.168.100.11", True)


def test_cage_p0_cabled_is_found_without_being_told() -> None:
    hosts = {"a": spark("a", 10, cage="f0np0"), "b": spark("b", 11, cage="f0np0")}
    fabric = find_fabric(hosts, ["a", "b"])
    assert fabric["b"].netdev == "enp1s0f0np0"
    assert fabric["b"].hcas == ("rocep1s0f0", "roceP2p1s0f0")


def test_wrong_interface_names_the_one_that_works() -> None:
    hosts = {"a": spark("a", 10, cage="f0np0"), "b": spark("b", 11, cage="f0np0")}
    with pytest.raises(FabricError) as caught:
        find_fabric(hosts, ["a", "b"], interface="enp1s0f1np1")
    assert str(caught.value) == (
        "enp1s0f1np1 has no link or address on a, b; the fabric is on enp1s0f0np0 "
        "(a 192.168.100.10/24, b 192.168.100.11/24): use fabric_interface=enp1s0f0np0 or leave "
        "it unset"
    )


def test_worker_link_down_keeps_the_head_cage_and_lists_both_netdevs_to_raise() -> None:
    fabric = find_fabric(seed_pair(), ["spark-a", "spark-b"])
    worker = fabric["spark-b"]
    assert (worker.netdev, worker.ip, worker.link_up) == ("enp1s0f1np1", None, False)
    assert worker.down_netdevs == ("enp1s0f1np1", "enP2p1s0f1np1")
    assert worker.ip_or_lookup().startswith("$(ip -4 -br addr show dev enp1s0f1np1")


def test_cage_key_pairs_the_twins() -> None:
    assert cage_key("enp1s0f1np1") == cage_key("enP2p1s0f1np1") == "1s0f1np1"
