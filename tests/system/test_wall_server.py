"""The wall's fork-server over real OpenSSH: one per connection, and never a way around the wall.

Walled calls on one pooled connection are forks of one warm helper on the host (its process is
found in /proc by its folder, which the head's sshd names). Killing that helper in the middle of
a call ends the call with an error that says it may or may not have run, and the next call is
walled again; where the helper cannot be started at all, the call does not run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.processes import sleepers
from tests.support.sshd_topology import Topology
from tests.support.waiting import WAIT_S, until
from tools.ssh import Inventory, SSHPool
from tools.ssh.errors import SSHError
from tools.wall import WallSpec
from tools.wall.host_landlock import landlock_abi

pytestmark = pytest.mark.system
WALL = WallSpec(scratch=True)


@pytest.fixture(autouse=True)
def needs_landlock_and_root() -> None:
    if landlock_abi() < 1 or os.geteuid() != 0:
        pytest.skip("needs root on a kernel with Landlock")


@pytest.fixture
async def pool(sshd_topology: Topology) -> AsyncIterator[SSHPool]:
    async with SSHPool(Inventory.from_dict(sshd_topology.inventory_data())) as opened:
        yield opened


def servers(topology: Topology) -> list[int]:
    """The head's wall servers: python processes serving from the head's helper folder."""
    folder = str(topology.head.workdir / "wall").encode()
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            words = (entry / "cmdline").read_bytes().split(b"\0")
            if entry.name.isdigit() and words[-2:] == [b"serve", b""] and folder in words[-3]:
                found.append(int(entry.name))
    return found


async def test_walled_calls_on_a_connection_are_forks_of_one_server(
    pool: SSHPool, sshd_topology: Topology
) -> None:
    said = [await pool.run("head", 'echo "$SCOUT_WALL"', wall=WALL) for _ in range(3)]
    assert all(result.walled and "landlock-abi-" in result.stdout for result in said)
    running = servers(sshd_topology)
    assert len(running) == 1
    both = await asyncio.gather(*(pool.run("head", "sleep 0.2; echo x", wall=WALL) for _ in "ab"))
    assert [result.stdout for result in both] == ["x\n", "x\n"]
    assert servers(sshd_topology) == running


async def test_a_server_killed_during_a_call_fails_the_call_and_the_next_is_walled_again(
    pool: SSHPool, sshd_topology: Topology
) -> None:
    await pool.run("head", "true", wall=WALL)
    [server] = servers(sshd_topology)
    seconds = f"60.{uuid.uuid4().int % 1000}"
    call = asyncio.create_task(pool.run("head", f"sleep {seconds}", wall=WALL))
    await until(lambda: sleepers(seconds), "the call to run on the host")  # then it is mid-call
    os.kill(server, 9)
    with pytest.raises(SSHError, match="may or may not have run"):
        await asyncio.wait_for(call, WAIT_S)
    again = await pool.run("head", 'echo "$SCOUT_WALL"; touch /etc/scout-wall-test', wall=WALL)
    assert again.walled and "landlock-abi-" in again.stdout and "Permission denied" in again.stderr
    assert not Path("/etc/scout-wall-test").exists()
    assert servers(sshd_topology) not in ([], [server])


async def test_where_no_server_can_start_the_call_does_not_run(
    pool: SSHPool, sshd_topology: Topology, tmp_path: Path
) -> None:
    folder = sshd_topology.head.workdir / "wall"
    aside = tmp_path / "wall-aside"
    if folder.exists():
        shutil.move(folder, aside)
    folder.write_text("not a folder: the helper cannot be written here\n")
    ran = tmp_path / "ran"
    try:
        result = await pool.run("head", f"echo ran > {ran}", wall=WALL)
    finally:
        folder.unlink()
        if aside.exists():
            shutil.move(aside, folder)
    assert result.unwalled is not None and "cannot write the wall helper" in result.unwalled
    assert not result.walled and not ran.exists()


async def test_a_cancelled_call_ends_on_the_host_with_what_it_started(pool: SSHPool) -> None:
    seconds = f"600.{uuid.uuid4().int % 10_000}"
    command = f"setsid sleep {seconds} >/dev/null 2>&1 < /dev/null & sleep {seconds}"
    call = asyncio.create_task(pool.run("head", command, wall=WALL))
    await until(lambda: len(sleepers(seconds)) == 2, "both sleeps to run on the host")
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await until(lambda: not sleepers(seconds), "both sleeps to end")
    assert (await pool.run("head", "echo still", wall=WALL)).stdout == "still\n"
