"""DGX Spark facts as recon reports them, built in code for unit tests; each keyword bends one fact.

`one_port_spark` reduces the fabric to the one cabled port (rocep1s0f1 → enp1s0f1np1), which is
what the findings tests read; `spark` has all four RoCE netdevs (two QSFP cages, each a pair of
PCIe twins) with one cage cabled, which is what fabric discovery and deployments read. The
numbers follow the seed pair (shared/seed, docs/sources.md): GB10, driver 580.95.05,
CUDA 13.0, ~121.7 GiB of unified memory, 192.168.100.x / 192.168.101.x on the cabled cage.
"""

from __future__ import annotations

from datetime import UTC, datetime

from tools.checks import GB
from tools.world.facts import (
    Container,
    Disk,
    DiskFacts,
    DockerFacts,
    FabricTestFacts,
    Gpu,
    GpuFacts,
    HostFacts,
    IdentityFacts,
    Image,
    InferenceServer,
    Interface,
    MemoryFacts,
    NetworkFacts,
    OsFacts,
    RdmaFacts,
    RdmaPort,
    ServiceFacts,
    ToolkitFacts,
)

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
MEM_TOTAL_BYTES = 130_663_165_952  # /proc/meminfo MemTotal of a Spark (~121.7 GiB)
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


def _spark(
    host: str,
    *,
    available_gb: float,
    containers: list[Container] | None,
    driver: str,
    ota: str = "7.3.1",
) -> HostFacts:
    """What every Spark here shares: identity, DGX OS, unified memory, one GB10, docker usable."""
    return HostFacts(
        host=host,
        collected_at=NOW,
        identity=IdentityFacts(hostname=f"{host}-x", arch="aarch64", kernel="6.17.0-1014-nvidia"),
        os=OsFacts(
            pretty_name="Ubuntu 24.04.3 LTS", dgx_swbuild_version="7.2.3", dgx_ota_version=ota
        ),
        memory=MemoryFacts(
            total_bytes=MEM_TOTAL_BYTES,
            available_bytes=round(available_gb * GB),
            unified_memory=True,
        ),
        gpu=GpuFacts(
            driver_version=driver,
            cuda_version="13.0",
            gpus=[Gpu(index=0, name="NVIDIA GB10", memory_supported=False)],
        ),
        toolkit=ToolkitFacts(nvcc_on_path=False, cuda_nvcc_present=True),
        docker=DockerFacts(installed=True, usable=True, containers=containers or []),
        fabric_tests=FabricTestFacts(nccl_tests=True, perftest=True),  # as the seed pair has
    )


def one_port_spark(
    host: str,
    *,
    available_gb: float = 110,
    containers: list[Container] | None = None,
    link_up: bool = True,
    address: str | None = "192.168.100.10/24",
    speed_mbps: int = 200_000,
    driver: str = "580.95.05",
    ota: str = "7.3.1",
) -> HostFacts:
    """A Spark whose fabric is the one cabled port, rocep1s0f1 → enp1s0f1np1 at `address`."""
    facts = _spark(host, available_gb=available_gb, containers=containers, driver=driver, ota=ota)
    facts.rdma = RdmaFacts(
        ports=[
            RdmaPort(
                device="rocep1s0f1",
                port=1,
                state="ACTIVE" if link_up else "DOWN",
                physical_state="LINK_UP" if link_up else "DISABLED",
                netdev="enp1s0f1np1",
                up=link_up,
            )
        ]
    )
    facts.network = NetworkFacts(
        interfaces=[
            Interface(
                name="enp1s0f1np1",
                state="UP" if link_up else "DOWN",
                addresses=[address] if address else [],
                speed_mbps=speed_mbps if link_up else None,
                fabric=True,
                link_local_only=bool(address and address.startswith("169.254.")),
            )
        ]
    )
    return facts


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
    facts = _spark(host, available_gb=available_gb, containers=containers, driver=driver)
    nics = [Interface(name="enP7s7", state="UP", addresses=[f"10.0.0.{octet}/24"])]
    ports = []
    for domain, subnet in (("enp1s0", 100), ("enP2p1s0", 101)):
        for c in ("f0np0", "f1np1"):
            up = c == cage and link_up
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
    facts.disk = DiskFacts(
        disks=[
            Disk(
                mount="/",
                filesystem="/dev/nvme0n1p2",
                size_bytes=4000 * GB,
                available_bytes=3700 * GB,
            )
        ]
    )
    chosen = [VLLM_IMAGE, SGLANG_IMAGE] if images is None else images
    facts.docker.images = [i.model_copy(deep=True) for i in chosen]  # each host its own
    facts.rdma = RdmaFacts(ports=ports if rdma else [])
    facts.network = NetworkFacts(interfaces=nics if rdma else nics[:1])
    servers = [InferenceServer(kind="vllm", port=8000, container="vllm_node")]
    facts.services = ServiceFacts(
        listening_ports=listening or [22],
        inference_servers=servers if listening and 8000 in listening else [],
    )
    return facts


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


def ring_spark(host: str, octet: int, port0: int, port1: int) -> HostFacts:
    """A Spark of NVIDIA's three-Spark ring (connect-three-sparks README, netplan option 2):
    both cages cabled, Port0's twins on 192.168.`port0`.x/24 and Port1's on 192.168.`port1`.x/24
    (host addresses `octet` and `octet`+1), the management LAN on enP7s7 10.0.0.`octet`."""
    facts = spark(host, octet)
    nics = [Interface(name="enP7s7", state="UP", addresses=[f"10.0.0.{octet}/24"])]
    ports = []
    for cage, subnet in (("f0np0", port0), ("f1np1", port1)):
        for twin, (domain, device) in enumerate(
            (("enp1s0", "rocep1s0"), ("enP2p1s0", "roceP2p1s0"))
        ):
            name = f"{domain}{cage}"
            nics.append(
                Interface(
                    name=name,
                    state="UP",
                    addresses=[f"192.168.{subnet}.{octet + twin}/24"],
                    speed_mbps=200_000,
                    fabric=True,
                )
            )
            ports.append(
                RdmaPort(
                    device=device + cage.split("np")[0],
                    port=1,
                    state="ACTIVE",
                    physical_state="LINK_UP",
                    netdev=name,
                    up=True,
                    link_layer="Ethernet",
                )
            )
    facts.network = NetworkFacts(interfaces=nics)
    facts.rdma = RdmaFacts(ports=ports)
    return facts


def spark_ring() -> dict[str, HostFacts]:
    """Three Sparks cabled node1 Port0 → node2 Port1, node2 Port0 → node3 Port1, node3 Port0 →
    node1 Port1: each cable its own /24 (192.168.0.x, .2.x, .1.x), as NVIDIA's playbook does."""
    return {
        "spark-a": ring_spark("spark-a", 1, port0=0, port1=1),
        "spark-b": ring_spark("spark-b", 3, port0=2, port1=0),
        "spark-c": ring_spark("spark-c", 5, port0=1, port1=2),
    }
