"""The simulated cluster served over real SSH.

The head is an asyncssh server on 127.0.0.1 (port 0). Workers have no listener at all: the head's
`connection_requested` hands a forwarded channel to an in-process worker server over a socketpair,
so reaching a worker needs the head as jump host and sends no traffic to its 192.168.x address.
Every command runs in the host's sandbox: the host's tool server (sim/tool_servers.py) launches
it walled in (sim/ssh_session.py, sim/host_command.py) and runs its fake tools.
sim/host_server.py is the SSH server of one host (auth, session limit, forwarding); this module
holds the cluster: start and stop, faults, routing of forwarded channels, and the inventory it
writes for Scout.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
from pathlib import Path
from types import TracebackType
from typing import Any

import asyncssh
import yaml

from sim.engine.endpoints import Endpoints
from sim.fakehost.procs import host_processes, signal_ours
from sim.fakehost.state import locked_state, read_state
from sim.host_server import HostServer
from sim.hostdir import materialize
from sim.scenario import Faults, Scenario, load_scenario
from sim.ssh_session import Bridge
from sim.tool_servers import ToolServerProcess

_UNSET: Any = object()


class SimClusterError(Exception):
    """The cluster was used wrongly (unknown host, not started)."""


class SimCluster:
    """A scenario's hosts as SSH servers; `async with SimCluster("seed-pair", tmp) as c: ...`."""

    def __init__(self, scenario: Scenario | str | Path, root_dir: str | Path) -> None:
        self.scenario = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
        self.root_dir = Path(root_dir).resolve()
        self._faults = {
            name: host.faults.model_copy() for name, host in self.scenario.hosts.items()
        }
        self._host_keys = {
            name: asyncssh.generate_private_key("ssh-ed25519") for name in self.scenario.hosts
        }
        self._client_key = asyncssh.generate_private_key("ssh-ed25519")
        self._connections: dict[str, set[asyncssh.SSHServerConnection]] = {
            name: set() for name in self.scenario.hosts
        }
        self._acceptor: asyncssh.SSHAcceptor | None = None
        self._endpoints: Endpoints | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._tool_servers: list[ToolServerProcess] = []
        self.head_port = 0

    async def __aenter__(self) -> SimCluster:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def head(self) -> str:
        return self.scenario.head

    @property
    def client_key(self) -> asyncssh.SSHKey:
        return self._client_key

    def host_dir(self, name: str) -> Path:
        self._check_host(name)
        return self.root_dir / "hosts" / name

    async def start(self) -> None:
        """Lay out every host folder and start listening for the head on 127.0.0.1."""
        for name, host in self.scenario.hosts.items():
            materialize(host, self.scenario.user, self.host_dir(name))
            server = ToolServerProcess(self.host_dir(name))
            server.start()
            self._tool_servers.append(server)
        self._endpoints = Endpoints({name: self.host_dir(name) for name in self.scenario.hosts})
        self._endpoints.start()
        self._acceptor = await asyncssh.create_server(
            lambda: HostServer(self, self.head),
            "127.0.0.1",
            self.head_port,
            **self._server_options(self.head),
        )
        self.head_port = self._acceptor.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Close the listener and every connection; running commands are killed."""
        if self._acceptor:
            self._acceptor.close()
            await self._acceptor.wait_closed()
            self._acceptor = None
        for conns in self._connections.values():
            for conn in list(conns):
                conn.abort()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._endpoints:
            await self._endpoints.close()
            self._endpoints = None
        for name in self.scenario.hosts:
            self._kill_engine_processes(name)
        for server in self._tool_servers:
            server.stop()
        self._tool_servers.clear()

    def _kill_engine_processes(self, name: str) -> None:
        """End what still runs inside a host: detached engine processes (`docker exec -d`,
        engine main commands) and jobs, which outlive their SSH sessions by design."""
        host_dir = self.host_dir(name)
        with contextlib.suppress(OSError, ValueError):
            for container in read_state(host_dir)["docker"]["containers"].values():
                signal_ours(container.get("pids", []), host_dir, signal.SIGKILL)
        signal_ours(host_processes(host_dir), host_dir, signal.SIGKILL)

    def connected(self, host: str, conn: asyncssh.SSHServerConnection) -> None:
        self._connections[host].add(conn)

    def disconnected(self, host: str, conn: asyncssh.SSHServerConnection) -> None:
        self._connections[host].discard(conn)

    def open_connections(self, host: str) -> int:
        """How many SSH connections `host` is serving now (what its sshd would count)."""
        self._check_host(host)
        return len(self._connections[host])

    def faults(self, name: str) -> Faults:
        self._check_host(name)
        return self._faults[name]

    def inject(
        self,
        host: str,
        *,
        latency_s: float | None = _UNSET,
        down: bool | None = _UNSET,
        hang: str | None = _UNSET,
        drop: str | None = _UNSET,
    ) -> Faults:
        """Change a host's faults now; arguments left out stay as they are, None clears.

        latency_s: seconds added before every command. down: the head closes every connection,
        a worker is refused by the head's forwarding. hang: regex; fake tools whose command line
        matches block until killed. drop: regex; a matching command loses its connection after
        its first output byte (or at exit).
        """
        faults = self.faults(host)
        changes = {"latency_s": latency_s, "down": down, "hang": hang, "drop": drop}
        for key, value in changes.items():
            if value is not _UNSET:
                default = Faults.model_fields[key].default
                setattr(faults, key, default if value is None else value)
        if changes["hang"] is not _UNSET or changes["down"] is not _UNSET:
            # The host's fake tools and its peers' (ssh, rsync, mpirun) read these from its state.
            with locked_state(self.host_dir(host)) as state:
                state["faults"].update(hang=faults.hang, down=faults.down)
        if faults.down:
            for conn in list(self._connections[host]):
                conn.abort()
        return faults

    def host_state(self, name: str) -> dict[str, Any]:
        """The host's current state (what its fake tools read and change)."""
        return read_state(self.host_dir(name))

    def accepts(self, username: str, key: asyncssh.SSHKey) -> bool:
        client = self._client_key.convert_to_public()
        return username == self.scenario.user and key.public_data == client.public_data

    def forward_target(self, from_host: str, dest_host: str, dest_port: int) -> str:
        """The worker a forward request names, or ChannelOpenError saying why not."""
        if from_host == self.head:
            for name, host in self.scenario.hosts.items():
                named = dest_host in (host.address, host.hostname, name)
                if name != self.head and dest_port == host.port and named:
                    return name
        raise asyncssh.ChannelOpenError(
            asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED,
            f"{from_host} forwards only to the cluster's workers; {dest_host}:{dest_port} "
            "is not one of them",
        )

    def names_engine_host(self, from_host: str, dest_host: str) -> bool:
        """Whether a forward to `dest_host` from `from_host` may mean an engine's HTTP port.

        Loopback names mean `from_host` itself; a host's hostname or any address it shows means
        that host. Only a worker's SSH port keeps going to its SSH server (see forward_target).
        """
        return self.engine_host(from_host, dest_host) is not None

    def engine_host(self, from_host: str, dest_host: str) -> str | None:
        if dest_host in ("localhost", "127.0.0.1", "::1", "0.0.0.0"):
            return from_host
        for name, host in self.scenario.hosts.items():
            if dest_host in (host.hostname, name) or (
                name == self.head and dest_host == host.address
            ):
                return name
            with contextlib.suppress(OSError, ValueError):
                nics = read_state(self.host_dir(name))["nics"].values()
                shown = {a.split("/")[0] for nic in nics for a in nic["addresses"]}
                if dest_host in shown and dest_host != host.address:
                    return name
        return None

    async def bridge_to_engine(self, from_host: str, dest_host: str, dest_port: int) -> Any:
        """Join a forwarded channel to the HTTP server of the engine serving on that port."""
        host = self.engine_host(from_host, dest_host)
        if host is not None and host != self.head and dest_port == self.scenario.hosts[host].port:
            return await self.bridge_to(self.forward_target(from_host, dest_host, dest_port))
        assert self._endpoints is not None and host is not None
        await self._endpoints.refresh()
        port = self._endpoints.port_for(host, dest_port)
        if port is None:
            raise asyncssh.ChannelOpenError(
                asyncssh.OPEN_CONNECT_FAILED,
                f"connect to {dest_host} port {dest_port} failed: Connection refused "
                f"(nothing listens on port {dest_port} of {host})",
            )
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return Bridge(reader, writer)

    async def bridge_to(self, worker: str) -> Bridge:
        """Serve one forwarded connection with a fresh in-process SSH server for `worker`."""
        near, far = socket.socketpair()

        async def serve() -> asyncssh.SSHServerConnection:
            return await asyncssh.run_server(
                far,
                server_factory=lambda: HostServer(self, worker),
                **self._server_options(worker),
            )

        task = asyncio.get_running_loop().create_task(serve())
        self._tasks.add(task)
        task.add_done_callback(self._forget_task)
        reader, writer = await asyncio.open_connection(sock=near)
        return Bridge(reader, writer)

    def _forget_task(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled():
            task.exception()

    def _server_options(self, name: str) -> dict[str, Any]:
        return {
            "server_host_keys": [self._host_keys[name]],
            "encoding": None,
            "line_editor": False,
            "allow_scp": False,
            "sftp_factory": None,
            "agent_forwarding": False,
            "x11_forwarding": False,
        }

    def write_inventory(self, path: str | Path) -> Path:
        """Write a Scout inventory plus `known_hosts` and the client key next to it."""
        if not self.head_port:
            raise SimClusterError("start the cluster before writing its inventory")
        path = Path(path).resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        key_path = path.parent / "id_ed25519"
        key_path.write_bytes(self._client_key.export_private_key("openssh"))
        key_path.chmod(0o600)
        known_hosts = path.parent / "known_hosts"
        lines, hosts = [], {}
        for name, host in self.scenario.hosts.items():
            public = self._host_keys[name].export_public_key().decode().strip()
            # the label says these hosts are simulated (Scout's Inventory.simulated reads it)
            labels = {"simulator": self.scenario.name}
            if name == self.head:
                lines.append(f"[127.0.0.1]:{self.head_port} {public}")
                hosts[name] = {"address": "127.0.0.1", "port": self.head_port,
                               "roles": ["head"], "labels": labels}  # fmt: skip
            else:
                lines.append(f"{host.address} {public}")
                hosts[name] = {
                    "address": host.address,
                    "port": host.port,
                    "jump": self.head,
                    "roles": [host.role],
                    "labels": labels,
                }
        known_hosts.write_text("\n".join(lines) + "\n")
        inventory = {
            "known_hosts": str(known_hosts),
            "defaults": {"user": self.scenario.user, "identity_file": str(key_path)},
            "hosts": hosts,
        }
        path.write_text(yaml.safe_dump(inventory, sort_keys=False))
        return path

    def _check_host(self, name: str) -> None:
        if name not in self.scenario.hosts:
            known = ", ".join(self.scenario.hosts)
            raise SimClusterError(
                f"no host {name!r} in scenario {self.scenario.name}; hosts: {known}"
            )
