"""What one host's SSH server and its sessions need from the cluster, as a protocol.

`SimCluster` (cluster.py) provides it; host_server.py and ssh_session.py depend on this instead of
on the cluster module, which builds them, so the three form no import cycle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import asyncssh

from sim.scenario import Faults


class ClusterView(Protocol):
    def host_dir(self, name: str) -> Path: ...

    def faults(self, name: str) -> Faults: ...

    def connected(self, host: str, conn: asyncssh.SSHServerConnection) -> None: ...

    def disconnected(self, host: str, conn: asyncssh.SSHServerConnection) -> None: ...

    def accepts(self, username: str, key: asyncssh.SSHKey) -> bool: ...

    def forward_target(self, from_host: str, dest_host: str, dest_port: int) -> str: ...

    def names_engine_host(self, from_host: str, dest_host: str) -> bool: ...

    async def bridge_to_engine(self, from_host: str, dest_host: str, dest_port: int) -> Any: ...

    async def bridge_to(self, worker: str) -> Any: ...
