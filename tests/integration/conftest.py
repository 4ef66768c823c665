"""Fixtures that many integration tests share: the seed pair simulated, a pool to it, and a
loopback port that refuses connections.

A test that needs another scenario names it: `@pytest.mark.parametrize("cluster", ["fresh-pair"],
indirect=True)`; a module that needs another kind of cluster defines its own `cluster`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from sim.cluster import SimCluster
from tests.support.closed_port import held_closed_port
from tools.ssh import Inventory, SSHPool


@pytest.fixture
async def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SimCluster]:
    scenario = getattr(request, "param", "seed-pair")
    async with SimCluster(scenario, tmp_path / "sim") as running:
        yield running


@pytest.fixture
async def pool(cluster: SimCluster, tmp_path: Path) -> AsyncIterator[SSHPool]:
    inventory = Inventory.load(cluster.write_inventory(tmp_path / "inv" / "inventory.yaml"))
    async with SSHPool(inventory) as ssh_pool:
        yield ssh_pool


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 nothing listens on, held so that nothing else can take it."""
    with held_closed_port() as port:
        yield port
