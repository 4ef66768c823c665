"""The SSH pool at scale against real OpenSSH: sixteen hosts, fifteen of them through one head,
every sshd with the default MaxSessions (10)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tests.support.sshd_fleet import SshdFleet, build_fleet
from tests.support.sshd_topology import topology_unavailable_reason
from tools.ssh import Inventory, SSHPool

pytestmark = pytest.mark.system


@pytest.fixture(scope="module")
def sshd_fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshdFleet]:
    reason = topology_unavailable_reason()
    if reason is not None:
        pytest.skip(f"real-sshd system tests skipped: {reason}")
    fleet = build_fleet(tmp_path_factory.mktemp("sshd-fleet"))
    try:
        yield fleet
    finally:
        fleet.teardown()


async def test_sixteen_hosts_share_one_connection_each_and_never_hit_max_sessions(
    sshd_fleet: SshdFleet,
) -> None:
    inventory = Inventory.from_dict(sshd_fleet.inventory_data())
    names = inventory.names()
    async with SSHPool(inventory) as pool:
        hostnames = [pool.run(name, "hostname") for name in names for _ in range(3)]
        burst = [pool.run("head", "sleep 0.2; echo done") for _ in range(30)]
        results = await asyncio.gather(*hostnames, *burst)
        assert all(r.exit_status == 0 for r in results), [r.stderr for r in results if r.stderr]
        assert [r.stdout.strip() for r in results[: 3 * len(names)]] == [
            name for name in names for _ in range(3)
        ]
        assert all(r.stdout == "done\n" for r in results[3 * len(names) :])
        # the head's sshd served one connection: its commands and the fifteen tunnels
        assert len(sshd_fleet.session_processes()) == 1
