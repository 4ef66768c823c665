"""The engine ports of a host that the simulator serves right now, and waiting for one to open
or to close.

The simulator (sim/engine/endpoints.py) writes HOST_DIR/engine/endpoints.json: served port →
the real loopback port of the HTTP server behind it. The fake `curl` reads it to connect; the
fake `docker stop` waits until its container's ports are gone from it, because a real
`docker stop` returns only once the container's processes have exited (SIGTERM, then SIGKILL
after the grace period; docs.docker.com/reference/cli/docker/container/stop/), so nothing
answers on those ports any more when it returns. The fake `vllm serve` waits until its port is
served before it logs that the server runs, as uvicorn logs it only once it listens.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from .procs import simulator_alive

ENDPOINTS = Path("engine") / "endpoints.json"
STOP_GRACE_S = 10.0  # docker stop's default --time
SERVE_WAIT_S = 120.0  # only bounds a hang; a loaded machine may take seconds to start a server
POLL_S = 0.02


def endpoints(host_dir: Path) -> dict[str, int]:
    """Served port → real loopback port, as the simulator last wrote it for this host."""
    try:
        return {k: int(v) for k, v in json.loads((host_dir / ENDPOINTS).read_text()).items()}
    except (OSError, ValueError):
        return {}


def wait_served(host_dir: Path, port: int, limit_s: float = SERVE_WAIT_S) -> bool:
    """Wait until the simulator serves `port`; False if it does not within `limit_s` (or has
    gone away)."""
    deadline = time.monotonic() + limit_s
    while str(port) not in endpoints(host_dir):
        if time.monotonic() >= deadline or not simulator_alive(host_dir):
            return False
        time.sleep(POLL_S)
    return True


def wait_closed(host_dir: Path, served: dict[str, int], limit_s: float = STOP_GRACE_S) -> bool:
    """Wait until none of `served` (port → real port, as read before the stop) is served any
    more; False if the simulator still serves one after `limit_s` (or has gone away)."""
    deadline = time.monotonic() + limit_s
    while True:
        now = endpoints(host_dir)
        if not any(now.get(port) == real for port, real in served.items()):
            return True
        if time.monotonic() >= deadline or not simulator_alive(host_dir):
            return False
        time.sleep(POLL_S)
