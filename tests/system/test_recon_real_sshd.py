"""The probe pack against real OpenSSH in network namespaces (worker only through the head).

First as the machine really is (no GPU tools: those facts must come back unknown, not as
errors), then with the simulator's fake Spark tools bind-mounted over /usr/local/bin inside the
worker's own mount namespace, so real sshd and real `sh` run them exactly as on a Spark.
"""

from __future__ import annotations

import platform
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from sim.hostdir import materialize
from sim.scenario import load_scenario
from tests.support.sshd_topology import Topology
from tools.recon.probe import probe_hosts
from tools.ssh import Inventory, SSHPool

pytestmark = pytest.mark.system


def inventory(topology: Topology) -> Inventory:
    return Inventory.from_dict(topology.inventory_data())


def os_pretty_name() -> str:
    for line in Path("/etc/os-release").read_text().splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.partition("=")[2].strip('"')
    raise AssertionError("no PRETTY_NAME in /etc/os-release")


async def test_probe_of_plain_hosts_gives_facts_and_unknowns(sshd_topology: Topology) -> None:
    async with SSHPool(inventory(sshd_topology)) as pool:
        probe_round = await probe_hosts(pool, ["head", "worker"])
    assert probe_round.failures == {}
    for name in ("head", "worker"):
        facts = probe_round.facts[name]
        assert facts.identity.hostname == name
        assert facts.identity.arch == platform.machine()
        assert facts.os.pretty_name == os_pretty_name()
        assert facts.memory.total_bytes and facts.memory.available_bytes
        assert facts.cpu.cpu_count
        if not facts.gpu.gpus:
            assert facts.gpu.problem  # says why (e.g. nvidia-smi: not found), never raises
        assert any(i.addresses for i in facts.network.interfaces)


@pytest.fixture
def spark_worker(sshd_topology: Topology, tmp_path: Path) -> Iterator[Path]:
    """The seed scenario's worker tools over /usr/local/bin in the worker sshd's mount namespace."""
    scenario = load_scenario("seed-pair")
    host_dir = materialize(scenario.hosts["spark-b"], scenario.user, tmp_path / "spark-b")
    sshd_pid = sshd_topology.worker.pid_file.read_text().strip()
    enter = ["nsenter", "-t", sshd_pid, "-m", "--"]
    subprocess.run(
        [*enter, "mount", "--bind", str(host_dir / "bin"), "/usr/local/bin"], check=True, timeout=30
    )
    try:
        yield host_dir
    finally:
        subprocess.run([*enter, "umount", "/usr/local/bin"], check=False, timeout=30)


async def test_probe_reads_fake_spark_tools_through_real_sshd(
    sshd_topology: Topology, spark_worker: Path
) -> None:
    async with SSHPool(inventory(sshd_topology)) as pool:
        probe_round = await probe_hosts(pool, ["worker"])
    assert probe_round.failures == {}
    worker = probe_round.facts["worker"]
    assert worker.identity.hostname == "spark-b4ec" and worker.identity.arch == "aarch64"
    assert [g.name for g in worker.gpu.gpus] == ["NVIDIA GB10"]
    assert (worker.gpu.driver_version, worker.gpu.cuda_version) == ("580.95.05", "13.0")
    assert worker.memory.unified_memory and worker.memory.budget_bytes
    assert worker.rdma.ports and not any(port.up for port in worker.rdma.ports)
    assert worker.toolkit.nvcc_on_path is False
