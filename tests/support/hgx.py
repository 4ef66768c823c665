"""An 8-GPU H100 node as recon reports it, built in code for unit tests.

The shape of sim/scenarios/h100-pair.yaml (its sources are cited there): eight H100 80GB GPUs,
eight NDR InfiniBand rails (mlx5_0, 3-6, 8-10, IPoIB netdevs ibp*, one /24), and ConnectX
Ethernet enp170s0np0 (mlx5_7) on 10.10.0.x/24, the NCCL socket interface.
"""

from __future__ import annotations

from datetime import UTC, datetime

from tools.world.facts import (
    Gpu,
    GpuFacts,
    HostFacts,
    Interface,
    MemoryFacts,
    NetworkFacts,
    RdmaFacts,
    RdmaPort,
)

MIB = 1024**2
RAILS = {
    "mlx5_0": "ibp24s0",
    "mlx5_3": "ibp64s0",
    "mlx5_4": "ibp79s0",
    "mlx5_5": "ibp94s0",
    "mlx5_6": "ibp154s0",
    "mlx5_8": "ibp192s0",
    "mlx5_9": "ibp206s0",
    "mlx5_10": "ibp220s0",
}


def h100_node(host: str, octet: int, *, free_mib: int = 81080) -> HostFacts:
    """An idle HGX H100 node: each GPU has `free_mib` free of 81559 MiB."""
    gpus = [
        Gpu(index=i, name="NVIDIA H100 80GB HBM3", memory_total_bytes=81559 * MIB) for i in range(8)
    ]
    ports = [
        RdmaPort(
            device=device,
            port=1,
            state="ACTIVE",
            physical_state="LINK_UP",
            netdev=netdev,
            up=True,
            link_layer="InfiniBand",
        )
        for device, netdev in RAILS.items()
    ]
    ports.append(
        RdmaPort(
            device="mlx5_7",
            port=1,
            state="ACTIVE",
            physical_state="LINK_UP",
            netdev="enp170s0np0",
            up=True,
            link_layer="Ethernet",
        )
    )
    nics = [
        Interface(
            name=netdev,
            state="UP",
            addresses=[f"100.126.6.{octet * 8 + i}/24"],
            speed_mbps=400_000,
            fabric=True,
        )
        for i, netdev in enumerate(RAILS.values())
    ]
    nics.append(
        Interface(
            name="enp170s0np0",
            state="UP",
            addresses=[f"10.10.0.{octet}/24"],
            speed_mbps=200_000,
            fabric=True,
        )
    )
    return HostFacts(
        host=host,
        collected_at=datetime(2026, 12, 2, 12, 0, tzinfo=UTC),
        memory=MemoryFacts(
            total_bytes=2_164_366_000_000,
            available_bytes=2_140_000_000_000,
            gpu_total_bytes=8 * 81559 * MIB,
            gpu_free_bytes=8 * free_mib * MIB,
        ),
        gpu=GpuFacts(driver_version="580.95.05", cuda_version="13.0", gpus=gpus),
        rdma=RdmaFacts(ports=ports),
        network=NetworkFacts(interfaces=nics),
    )
