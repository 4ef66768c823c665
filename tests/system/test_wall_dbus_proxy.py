"""D-Bus clients inside the wall, through its read-only proxy, against a bus over real sshd.

The host's system bus is a private dbus-daemon that sshd's sessions name in
DBUS_SYSTEM_BUS_ADDRESS (tests/support/bus_host.py): the helper's proxy finds it there. Inside
the wall, built as Landlock ABI 1, 4, 5 and this kernel's own would be, real clients read
through the proxy (busctl and dbus-send, sd-bus and libdbus; gdbus, GLib, which authenticates
ANONYMOUS over TCP), and every change (RequestName, UpdateActivationEnvironment, BecomeMonitor,
ReleaseName) fails with AccessDenied naming the method, where the same command without the wall
is answered by the bus. ssh_exec runs a D-Bus read walled through the proxy.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from agent.safety.shell.judge import judge_shell
from tests.support.bus_host import BusHost, bus_host
from tests.support.private_bus import missing_client
from tests.support.sshd_topology import topology_unavailable_reason
from tools.base import ToolContext
from tools.risk.assessment import Risk
from tools.ssh import Inventory, SSHPool
from tools.ssh_exec import SSHExec, SSHExecInput
from tools.wall import WallSpec
from tools.wall.host_landlock import landlock_abi

pytestmark = pytest.mark.system
ABIS = sorted({abi for abi in (1, 4, 5, landlock_abi()) if 0 < abi <= landlock_abi()})
DRIVER = "org.freedesktop.DBus /org/freedesktop/DBus"
GDBUS = "gdbus call --system --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus"
READS = {
    f"busctl call {DRIVER} org.freedesktop.DBus ListNames": '"org.freedesktop.DBus"',
    f"{GDBUS} --method org.freedesktop.DBus.Properties.GetAll org.freedesktop.DBus": "'Features'",
    "dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus "
    "org.freedesktop.DBus.GetNameOwner string:org.freedesktop.DBus": "org.freedesktop.DBus",
    f"busctl introspect {DRIVER} | grep -c '^org.freedesktop.DBus '": "1",
}
CHANGES = {
    f"{GDBUS} --method org.freedesktop.DBus.RequestName org.scout.wall 0": "RequestName",
    f"{GDBUS} --method org.freedesktop.DBus.UpdateActivationEnvironment \"{{'A': 'b'}}\"": (
        "UpdateActivationEnvironment"
    ),
    f"{GDBUS} --method org.freedesktop.DBus.Monitoring.BecomeMonitor '[]' 0": "BecomeMonitor",
    "dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus "
    "org.freedesktop.DBus.ReleaseName string:org.scout.wall": "ReleaseName",
}


@pytest.fixture(scope="module")
def host() -> Iterator[BusHost]:
    reason = topology_unavailable_reason() or (
        f"{missing_client()} is not installed here (apt-get install dbus)"
        if missing_client()
        else None
    )
    if reason is not None or landlock_abi() < 1:
        pytest.skip(reason or "needs a kernel with Landlock")
    with bus_host() as started:
        yield started


@pytest.fixture
async def pool(host: BusHost) -> AsyncIterator[SSHPool]:
    async with SSHPool(Inventory.from_dict(host.inventory_data())) as opened:
        yield opened


async def walled(pool: SSHPool, command: str, abi: int) -> tuple[int | None, str]:
    wall = WallSpec(scratch=True, dbus=True, max_abi=abi)
    result = await pool.run("bus", command, timeout=30, wall=wall)
    assert result.unwalled is None and result.walled, result.unwalled
    return result.exit_status, result.stdout + result.stderr


@pytest.mark.parametrize("abi", ABIS)
async def test_reads_pass_and_every_change_is_refused_at_the_proxy(abi: int, pool: SSHPool) -> None:
    status, said = await walled(pool, 'echo "$SCOUT_WALL"', abi)
    assert f"landlock-abi-{abi}," in said and "dbus-read-proxy" in said
    for read, shown in READS.items():
        status, said = await walled(pool, read, abi)
        assert status == 0 and shown in said, (read, said)
    for change, method in CHANGES.items():
        status, said = await walled(pool, change, abi)
        assert status != 0 and "org.freedesktop.DBus.Error.AccessDenied" in said, (change, said)
        assert f"read-only D-Bus proxy: org.freedesktop.DBus.{method}" in said or (
            f"Monitoring.{method}" in said
        )
        outside = await pool.run("bus", change, timeout=30)  # the bus itself allows it
        assert "AccessDenied" not in outside.stdout + outside.stderr, outside.stderr
    status, said = await walled(pool, f"busctl call {DRIVER} org.freedesktop.DBus "
                                       "RequestName su org.scout.wall 0", abi)  # fmt: skip
    assert status != 0 and "Access denied" in said


@pytest.mark.parametrize("abi", ABIS)
async def test_systemctl_as_root_falls_back_to_the_proxy_and_a_restart_is_refused(
    abi: int, pool: SSHPool
) -> None:
    """systemctl as root tries /run/systemd/private first (a unix socket: closed inside the
    wall), then the system bus's address, which is the proxy: its reads reach the bus (here no
    systemd answers them), its restart is refused there."""
    status, said = await walled(pool, "systemctl status scout-wall-test", abi)
    assert status != 0 and "org.freedesktop.systemd1" in said, said
    status, said = await walled(pool, "systemctl restart scout-wall-test", abi)
    assert status != 0 and "Failed to restart scout-wall-test.service: Access denied" in said
    outside = await pool.run("bus", "systemctl restart scout-wall-test", timeout=30)
    assert outside.exit_status != 0 and "Access denied" not in outside.stderr, outside.stderr
    assert "org.freedesktop.systemd1" in outside.stderr  # the bus itself took the call


async def test_ssh_exec_runs_a_d_bus_read_walled_through_the_proxy(
    pool: SSHPool, tmp_path: Path
) -> None:
    tool = SSHExec(pool, judge_shell)
    status = SSHExecInput(host="bus", command="systemctl status docker")
    assert tool.risk(status).risk == Risk.READ_ONLY, tool.risk(status).reason
    # no systemd here (systemctl asks for PID 1's): busctl shows the same path, run walled
    read = SSHExecInput(host="bus", command="busctl --no-pager list --acquired")
    result = await tool.run(read, ToolContext(spill_dir=tmp_path, wall=True))
    assert result.meta["walled"] == {"bus": True} and not result.is_error, result.text
    assert "\norg.freedesktop.DBus " in result.text
