"""A real SSH pool over an inventory with no hosts, for tools whose schema, risk or commands a
test reads without running them (a tool that reaches hosts is always built with a pool)."""

from __future__ import annotations

from tools.ssh import Inventory, SSHPool


def no_hosts() -> SSHPool:
    """Connects nowhere: every host it is asked for is unknown to its inventory."""
    return SSHPool(Inventory(hosts={}))
