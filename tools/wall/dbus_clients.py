"""D-Bus clients the wall's read-only proxy serves, and what sends one past it.

Inside the wall a D-Bus client reaches the system bus only through host_dbus_proxy.py, whose
address the helper puts in DBUS_SYSTEM_BUS_ADDRESS (the session bus's variable it removes).
A client reaches the proxy only when nothing in its line names another bus or transport; such
a line is no proxied read and asks (fail closed: the proxy would not filter it, the wall would
refuse it without a word). Per client, from its own manual:

- systemd's tools (systemctl(1), busctl(1), loginctl(1), hostnamectl(1), timedatectl(1),
  networkctl(1)):
  `-H/--host` (over SSH), `-M/--machine` (a container's bus), `--user` and `-C/--capsule`
  (a user's bus), busctl's `--address`; they use the system bus by default;
- gdbus(1): `--session/-e` and `--address/-a`; it needs `--system/-y` to reach the proxy;
- dbus-send(1): `--session` is its default, so only `--system` reaches the proxy, and
  `--bus=`/`--peer=`/`--address` name another;
- nmcli(1) always uses the system bus.

resolvectl is none of them: its reads are DNS queries resolved sends past the wall's address
limits, so it stays an unproxied daemon client, and asks.

A DBUS_* or SYSTEMD_* variable anywhere in the line (an address, SYSTEMD_BUS_TIMEOUT is
harmless but SYSTEMD_* as a class can point sd-bus elsewhere) sends it elsewhere too.
"""

from __future__ import annotations

import re

SYSTEMD_TOOLS = ("systemctl", "busctl", "loginctl", "hostnamectl", "timedatectl", "networkctl")
D_BUS_CLIENTS = (*SYSTEMD_TOOLS, "gdbus", "dbus-send", "nmcli")
_SYSTEMD_ELSEWHERE = re.compile(r"--(host|machine|user|capsule|address)(=.*)?|-[A-Za-z]*[HMC].*")
_GDBUS_ELSEWHERE = re.compile(r"--(session|address)(=.*)?|-[A-Za-z]*[ea].*")
_DBUS_SEND_ELSEWHERE = re.compile(r"--(session|bus|peer|address)(=.*)?")
_VARIABLES = re.compile(r"\b(DBUS|SYSTEMD)_[A-Z_]+")


def line_names_a_bus(command: str) -> bool:
    """Whether the line sets or names a D-Bus or systemd variable anywhere."""
    return _VARIABLES.search(command) is not None


def sent_elsewhere(client: str, words: list[str]) -> bool:
    """Whether `client`'s own words (up to the next shell operator) send it to another bus
    than the system bus the proxy stands for."""
    if client in SYSTEMD_TOOLS:
        return any(_SYSTEMD_ELSEWHERE.fullmatch(word) for word in words)
    if client == "gdbus":
        return any(_GDBUS_ELSEWHERE.fullmatch(word) for word in words) or not (
            {"--system", "-y"} & set(words)
        )
    if client == "dbus-send":
        return "--system" not in words or any(_DBUS_SEND_ELSEWHERE.fullmatch(w) for w in words)
    return False
