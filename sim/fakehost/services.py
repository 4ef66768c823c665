"""`systemctl` for the one service a scenario runs (earlyoom), and `sync`.

`systemctl stop|start UNIT` prints nothing and exits 0; `is-active` prints `active` (exit 0) or
`inactive` (exit 3); a unit the host does not have is `Unit NAME.service not loaded.`, exit 5
(systemd's systemctl(1), "Exit status"). Stopping earlyoom ends its process, so `pgrep -x
earlyoom` (gpu_faults.py) finds nothing after it. `sync` has nothing to write back in the sim.

Inside Scout's wall a real systemctl reaches the bus only through the wall's read-only D-Bus
proxy (tools/wall/host_dbus_proxy.py; SCOUT_WALL names `dbus-read-proxy`, or `no-dbus-proxy`
where the helper could bind no port, as here): `is-active` reads, and a start or stop is
refused there, which systemctl prints as "Failed to stop UNIT.service: Access denied"; with
no proxy asked for, the closed socket refuses the connection.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from .scout_wall import WALLED_ENV
from .state import locked_state

UNITS = ("earlyoom",)
PROXY_PARTS = ("dbus-read-proxy", "no-dbus-proxy")  # the call asked for the D-Bus proxy


def run_systemctl(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    words = [a for a in args if not a.startswith("-")]
    if len(words) < 2:
        sys.stderr.write("Too few arguments.\n")
        return 1
    verb, unit = words[0], words[1].removesuffix(".service")
    if os.environ.get(WALLED_ENV) == "1":
        if not set(PROXY_PARTS) & set(os.environ.get("SCOUT_WALL", "").split(",")):
            sys.stderr.write("Failed to connect to bus: Operation not permitted\n")
            return 1
        if verb in ("stop", "start", "restart"):
            sys.stderr.write(f"Failed to {verb} {unit}.service: Access denied\n")
            return 1
    if verb == "is-active":
        running = unit in UNITS and bool(state.get(unit))
        print("active" if running else "inactive")
        return 0 if running else 3
    if unit not in UNITS:
        sys.stderr.write(f"Unit {unit}.service not loaded.\n")
        return 5
    if verb in ("stop", "start", "restart"):
        with locked_state(host_dir) as current:
            current[unit] = verb != "stop"
        return 0
    sys.stderr.write(f"Unknown command verb {verb}.\n")
    return 1


def run_sync(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    return 0
