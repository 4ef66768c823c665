"""The SSH pool at 64 simulated hosts: the seed's head and 63 copies of its worker through it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sim.cluster import SimCluster
from sim.fleet import fleet
from sim.scenario import load_scenario
from tools.ssh import Inventory, SSHPool

pytestmark = pytest.mark.slow


@pytest.mark.timeout(300)  # 64 simulated hosts on a 2-core machine shared with other work
async def test_sixty_four_hosts_one_connection_each_commands_capped_per_host(
    tmp_path: Path,
) -> None:
    scenario = fleet(load_scenario("seed-pair"), 64)
    async with SimCluster(scenario, tmp_path / "sim") as cluster:
        inventory = Inventory.load(cluster.write_inventory(tmp_path / "inventory.yaml"))
        names = inventory.names()
        async with SSHPool(inventory) as pool:
            hostnames = [pool.run(name, "hostname") for name in names]
            burst = [pool.run("spark-a", "nvidia-smi -L") for _ in range(30)]
            results = await asyncio.gather(*hostnames, *burst)
            assert all(r.exit_status == 0 for r in results), {r.stderr for r in results}
            expected = [scenario.hosts[name].hostname for name in names]
            assert [r.stdout.strip() for r in results[: len(names)]] == expected
            assert all("NVIDIA GB10" in r.stdout for r in results[len(names) :])
            # one SSH connection per host; the head's also carries the 63 tunnels
            assert {name: cluster.open_connections(name) for name in names} == dict.fromkeys(
                names, 1
            )
