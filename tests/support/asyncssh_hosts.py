"""Small in-process SSH hosts for integration tests: real SSH, real `bash -c`, loopback only.

Each host is an asyncssh server on 127.0.0.1, port 0, with its own host key. It accepts one
client key, can act as a jump host (direct-tcpip to loopback), refuses sessions beyond
`max_sessions` per connection the way OpenSSH's MaxSessions does, and counts what it saw so tests
can assert on reuse and tunnelling.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncssh

from tools.ssh import Inventory


@dataclass
class LocalHost:
    name: str
    host_key: asyncssh.SSHKey
    max_sessions: int
    acceptor: Any = None
    port: int = 0
    connections: int = 0
    tunnels: int = 0
    peak_sessions: int = 0
    refused_sessions: int = 0
    server_conns: list[asyncssh.SSHServerConnection] = field(default_factory=list)

    def known_hosts_line(self) -> str:
        return f"[127.0.0.1]:{self.port} {self.host_key.export_public_key().decode().strip()}"


class LocalHosts:
    """A set of local SSH hosts, a client key, and files an inventory can point to."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.client_key = asyncssh.generate_private_key("ssh-ed25519")
        self.key_path = workdir / "id_ed25519"
        self.key_path.write_bytes(self.client_key.export_private_key("openssh"))
        self.key_path.chmod(0o600)
        self.known_hosts_path = workdir / "known_hosts"
        self.hosts: dict[str, LocalHost] = {}
        self._children: set[asyncio.subprocess.Process] = set()

    async def add(self, name: str, *, max_sessions: int = 10) -> LocalHost:
        host = LocalHost(name, asyncssh.generate_private_key("ssh-ed25519"), max_sessions)
        host.acceptor = await asyncssh.create_server(
            lambda: _Server(self, host),
            "127.0.0.1",
            0,
            server_host_keys=[host.host_key],
            encoding=None,
        )
        host.port = host.acceptor.sockets[0].getsockname()[1]
        self.hosts[name] = host
        return host

    def write_known_hosts(self, *names: str) -> None:
        lines = [self.hosts[n].known_hosts_line() for n in names]
        self.known_hosts_path.write_text("".join(f"{line}\n" for line in lines))

    def inventory(self, jumps: dict[str, str] | None = None, **extra: dict[str, Any]) -> Inventory:
        """An inventory of every host (plus `extra` raw entries), user `tester`, our key."""
        jumps = jumps or {}
        hosts: dict[str, Any] = {
            name: {"address": "127.0.0.1", "port": host.port, "jump": jumps.get(name)}
            for name, host in self.hosts.items()
        }
        hosts.update(extra)
        return Inventory.from_dict(
            {
                "known_hosts": str(self.known_hosts_path),
                "defaults": {"user": "tester", "identity_file": str(self.key_path)},
                "hosts": hosts,
            }
        )

    async def close(self) -> None:
        for child in list(self._children):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
        for host in self.hosts.values():
            host.acceptor.close()
            await host.acceptor.wait_closed()

    async def run_bash(self, host: LocalHost, stdout: Any, stderr: Any) -> None:
        """Run the session's command with a real `bash -c`, streaming its output back."""
        channel = stdout.channel
        child = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            channel.get_command() or "true",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            env={**os.environ, "SCOUT_TEST_HOST": host.name},
        )
        self._children.add(child)
        try:

            async def pump(source: asyncio.StreamReader, sink: Any) -> None:
                while chunk := await source.read(65536):
                    sink.write(chunk)

            assert child.stdout is not None and child.stderr is not None
            await asyncio.gather(pump(child.stdout, stdout), pump(child.stderr, stderr))
            status = await child.wait()
        finally:
            self._children.discard(child)
        channel.exit(status if status >= 0 else 128 - status)


class _Server(asyncssh.SSHServer):
    def __init__(self, hosts: LocalHosts, host: LocalHost) -> None:
        self.hosts = hosts
        self.host = host
        self.active = 0

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.host.connections += 1
        self.host.server_conns.append(conn)

    def begin_auth(self, username: str) -> bool:
        return True

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        return key.public_data == self.hosts.client_key.public_data

    def connection_requested(
        self, dest_host: str, dest_port: int, orig_host: str, orig_port: int
    ) -> bool:
        self.host.tunnels += 1
        return dest_host in ("127.0.0.1", "localhost")

    def session_requested(self) -> Any:
        if self.active >= self.host.max_sessions:
            self.host.refused_sessions += 1
            return False
        self.active += 1
        self.host.peak_sessions = max(self.host.peak_sessions, self.active)

        async def handler(stdin: Any, stdout: Any, stderr: Any) -> None:
            try:
                await self.hosts.run_bash(self.host, stdout, stderr)
            finally:
                self.active -= 1

        return handler
