"""Recon of the larger scenarios over real SSH: three Sparks in a ring, eight behind a switch,
two 8-GPU H100 nodes on InfiniBand; every host through the head."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.cluster import SimCluster
from tools.recon.probe import ProbeRound, probe_hosts
from tools.ssh import Inventory, SSHPool

MIB = 1024**2


async def recon(scenario: str, tmp_path: Path) -> ProbeRound:
    async with SimCluster(scenario, tmp_path / "sim") as cluster:
        inventory = Inventory.load(cluster.write_inventory(tmp_path / "inventory.yaml"))
        async with SSHPool(inventory) as pool:
            return await probe_hosts(pool, inventory.names())


@pytest.mark.slow
async def test_spark_trio_has_every_cx7_port_up_with_its_own_subnet(tmp_path: Path) -> None:
    probe = await recon("spark-trio", tmp_path)
    assert probe.failures == {} and sorted(probe.facts) == ["spark-a", "spark-b", "spark-c"]
    for facts in probe.facts.values():
        assert len(facts.rdma.ports) == 4 and all(port.up for port in facts.rdma.ports)
    addresses = {
        name: {a for i in f.network.interfaces if i.fabric for a in i.addresses if ":" not in a}
        for name, f in probe.facts.items()
    }
    assert {"192.168.0.1/24", "192.168.1.2/24"} <= addresses["spark-a"]
    assert {"192.168.0.3/24", "192.168.2.1/24"} <= addresses["spark-b"]  # node1 p0 - node2 p1
    assert {"192.168.1.3/24", "192.168.2.3/24"} <= addresses["spark-c"]


@pytest.mark.slow
async def test_spark_rack_8_shares_one_switched_subnet(tmp_path: Path) -> None:
    probe = await recon("spark-rack-8", tmp_path)
    assert probe.failures == {} and len(probe.facts) == 8
    for facts in probe.facts.values():
        up = sorted(port.device for port in facts.rdma.ports if port.up)
        assert up == ["roceP2p1s0f1", "rocep1s0f1"]
        fabric = next(i for i in facts.network.interfaces if i.name == "enp1s0f1np1")
        assert fabric.speed_mbps == 200_000 and fabric.addresses[0].startswith("192.168.100.")


async def test_h100_pair_shows_eight_gpus_with_memory_and_infiniband_rails(
    tmp_path: Path,
) -> None:
    probe = await recon("h100-pair", tmp_path)
    assert probe.failures == {} and sorted(probe.facts) == ["h100-a", "h100-b"]
    for facts in probe.facts.values():
        assert facts.identity.arch == "x86_64" and facts.cpu.cpu_count == 224
        assert [g.name for g in facts.gpu.gpus] == ["NVIDIA H100 80GB HBM3"] * 8
        assert all(g.memory_total_bytes == 81559 * MIB for g in facts.gpu.gpus)
        assert not facts.memory.unified_memory
        assert facts.memory.budget_bytes == 8 * 81559 * MIB  # idle: every GPU's memory
        up = [port.device for port in facts.rdma.ports if port.up]
        assert len(up) == 9 and "mlx5_10" in up  # eight IB rails and enp170s0np0
        # `rdma link` names no IPoIB netdev before Linux 6.7: it comes from ibdev2netdev
        ports = {p.device: (p.netdev, p.link_layer) for p in facts.rdma.ports}
        assert ports["mlx5_0"] == ("ibp24s0", "InfiniBand")
        assert ports["mlx5_10"] == ("ibp220s0", "InfiniBand")
        assert ports["mlx5_7"] == ("enp170s0np0", "Ethernet")
