"""Which D-Bus client lines reach the wall's read-only proxy, and what that makes of their risk.

A systemd tool, gdbus, dbus-send or nmcli that talks to the system bus is served by the proxy:
its reads run walled, unasked. One sent to another bus or transport (`-H`, `-M`, `--user`,
`--address`, gdbus's `--session`, dbus-send's default session bus, a DBUS_*/SYSTEMD_* variable)
would pass no filter: it asks. So does every client on a host whose wall cannot hold the
proxy's port.
"""

from __future__ import annotations

from typing import cast

import pytest

from agent.safety.shell.judge import inventory_judge
from tools.risk.assessment import Risk
from tools.ssh.pool import SSHPool
from tools.ssh_exec import SSHExec, SSHExecInput
from tools.wall import HostWalls
from tools.wall.daemons import outside_read, unproxied_client


@pytest.mark.parametrize(
    ("command", "unproxied"),
    [
        ("systemctl status nvidia-persistenced", None),
        ("systemctl list-units --type=service --state=running", None),
        ("nmcli -t -f DEVICE,STATE device", None),
        ("timedatectl show -p NTPSynchronized", None),
        ("busctl tree org.freedesktop.systemd1", None),
        ("networkctl list", None),
        ("resolvectl query example.com", "resolvectl"),  # DNS past the wall: asks
        ("gdbus introspect --system -d a -o /b", None),
        ("dbus-send --system --print-reply --dest=a /b c.D", None),
        ("systemctl -H spark-b status x", "systemctl"),
        ("systemctl -Hroot@spark-b status x", "systemctl"),
        ("systemctl --machine=c1 status x", "systemctl"),
        ("systemctl --user status x", "systemctl"),
        ("loginctl -M c1 list-sessions", "loginctl"),
        ("hostnamectl --host spark-b", "hostnamectl"),
        ("busctl --address=unix:path=/run/x call a /b c D", "busctl"),
        ("DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/x busctl tree", "busctl"),
        ("export SYSTEMD_BUS_ADDRESS=x; timedatectl", "timedatectl"),
        ("gdbus call --session -d a -o /b -m c.D", "gdbus"),
        ("gdbus introspect -e -d a -o /b", "gdbus"),
        ("gdbus introspect -d a -o /b", "gdbus"),  # no bus named: not the proxy's
        ("dbus-send --print-reply --dest=a /b c.D", "dbus-send"),  # its default: session
        ("dbus-send --system --bus=unix:path=/x --dest=a /b c.D", "dbus-send"),
        ("systemctl status x; systemctl -M c1 status x", "systemctl"),
        ("systemctl status x | grep -c Active", None),
    ],
)
def test_a_d_bus_client_is_proxied_unless_its_line_names_another_bus(
    command: str, unproxied: str | None
) -> None:
    assert unproxied_client(command) == unproxied


READS = (
    "systemctl status docker",
    "systemctl is-active docker",
    "systemctl show -p ActiveState docker",
    "systemctl --failed",
    "nmcli device status",
    "nmcli connection show",
    "timedatectl",
    "hostnamectl",
)


@pytest.mark.parametrize("read", READS)
def test_d_bus_reads_run_walled_through_the_proxy_not_outside_the_wall(read: str) -> None:
    tool = SSHExec(cast(SSHPool, None), inventory_judge([]))
    assert not outside_read(read)  # so ssh_exec runs it inside the wall, with dbus=1
    assert tool.risk(SSHExecInput(host="h", command=read)).risk == Risk.READ_ONLY


def test_a_client_sent_to_another_bus_asks_naming_it() -> None:
    tool = SSHExec(cast(SSHPool, None), inventory_judge([]))
    asked = tool.risk(SSHExecInput(host="h", command="systemctl -M c1 status docker"))
    assert asked.risk > Risk.READ_ONLY and asked.reason.startswith("systemctl works through")


def test_d_bus_reads_ask_on_a_host_whose_wall_cannot_hold_the_proxy_s_port() -> None:
    walls = HostWalls()
    walls.record("old-user", True, "landlock-abi-1,seccomp,no-new-privs,subreaper")
    walls.record("new-user", True, "landlock-abi-4,seccomp,no-new-privs,subreaper")
    tool = SSHExec(cast(SSHPool, None), inventory_judge([]), walls)
    new = tool.risk(SSHExecInput(host="new-user", command="systemctl status docker"))
    assert new.risk == Risk.READ_ONLY
    old = tool.risk(SSHExecInput(host="old-user", command="systemctl status docker"))
    assert old.risk > Risk.READ_ONLY
    assert "old-user's wall cannot hold systemctl's read-only proxy" in old.reason
