"""The SSH server side of one simulated host: who may log in, how many sessions, what it forwards.

Auth is by the cluster's client key only. Like OpenSSH's default `MaxSessions 10`
(sshd_config(5)), a connection holds at most MAX_SESSIONS shell/exec sessions at once; the next
one is refused with "open failed" (what `ssh` prints as `channel N: open failed: administratively
prohibited: open failed`). Forwarded channels do not count, as in OpenSSH. The head forwards to
the cluster's workers and to engines' HTTP ports, nothing else.
"""

from __future__ import annotations

from typing import Any

import asyncssh

from sim.cluster_view import ClusterView
from sim.ssh_session import CommandSession

MAX_SESSIONS = 10


class HostServer(asyncssh.SSHServer):
    """Auth by the cluster's client key; on the head, forwarding to workers only."""

    def __init__(self, cluster: ClusterView, host: str) -> None:
        self._cluster, self._host = cluster, host
        self._conn: asyncssh.SSHServerConnection | None = None
        self._sessions = 0

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._conn = conn
        if self._cluster.faults(self._host).down:
            conn.abort()
            return
        self._cluster.connected(self._host, conn)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._conn:
            self._cluster.disconnected(self._host, self._conn)

    def begin_auth(self, username: str) -> bool:
        return True

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        return self._cluster.accepts(username, key)

    def session_requested(self) -> CommandSession:
        if self._sessions >= MAX_SESSIONS:
            refused = asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED
            raise asyncssh.ChannelOpenError(refused, "open failed")
        self._sessions += 1
        return CommandSession(self._cluster, self._host, self._session_closed)

    def _session_closed(self) -> None:
        self._sessions -= 1

    def connection_requested(
        self, dest_host: str, dest_port: int, orig_host: str, orig_port: int
    ) -> Any:
        if self._cluster.names_engine_host(self._host, dest_host):
            return self._cluster.bridge_to_engine(self._host, dest_host, dest_port)
        target = self._cluster.forward_target(self._host, dest_host, dest_port)
        if self._cluster.faults(target).down:
            raise asyncssh.ChannelOpenError(
                asyncssh.OPEN_CONNECT_FAILED,
                f"connect to {dest_host} port {dest_port} failed: No route to host "
                f"({target} is down)",
            )
        return self._cluster.bridge_to(target)
