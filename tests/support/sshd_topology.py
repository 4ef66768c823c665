"""A real OpenSSH topology for system tests: a head reachable from here, a worker only through it.

Two network namespaces joined by veth pairs (names unique per run), one `sshd` in each with its
own host key and hostname, default MaxSessions, and an `unreachable` route in the root namespace
for the worker's address so a direct connect fails here instead of leaving the machine.
`build_topology` returns everything a test needs plus `teardown()`, which is safe to call after a
partial build.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.sshd import (
    SSHD,
    CommandFailed,
    new_key,
    run,
    wait_until_listening,
    write_sshd_config,
)


def topology_unavailable_reason() -> str | None:
    """Why the real-sshd topology cannot be built here, or None when it can."""
    if os.geteuid() != 0:
        return "needs root (network namespaces and sshd)"
    if not SSHD.exists():
        return f"{SSHD} is missing (apt-get install openssh-server)"
    missing = [tool for tool in ("ip", "unshare", "ssh-keygen") if shutil.which(tool) is None]
    if missing:
        return f"missing tools: {', '.join(missing)}"
    return None


@dataclass
class SshdHost:
    name: str
    namespace: str
    address: str
    workdir: Path
    host_key_pub: str = ""

    @property
    def pid_file(self) -> Path:
        return self.workdir / "sshd.pid"

    def known_hosts_line(self) -> str:
        return f"{self.address} {self.host_key_pub}"


@dataclass
class Topology:
    head: SshdHost
    worker: SshdHost
    client_key: Path
    known_hosts: Path
    _undo: list[Callable[[], None]] = field(default_factory=list)

    def namespace_commands(self, host: SshdHost) -> list[str]:
        """Command lines of every process running in `host`'s namespace."""
        pids = run(["ip", "netns", "pids", host.namespace], check=False).stdout.split()
        lines = []
        for pid in pids:
            with contextlib.suppress(OSError):
                raw = Path(f"/proc/{pid}/cmdline").read_bytes()
                lines.append(raw.replace(b"\0", b" ").decode().strip())
        return lines

    def inventory_data(self, *, worker_jump: str | None = "head") -> dict[str, object]:
        return {
            "known_hosts": str(self.known_hosts),
            "defaults": {"user": "root", "identity_file": str(self.client_key)},
            "hosts": {
                "head": {"address": self.head.address, "roles": ["head"]},
                "worker": {
                    "address": self.worker.address,
                    "jump": worker_jump,
                    "roles": ["worker"],
                },
            },
        }

    def teardown(self) -> None:
        """Undo every step that was done, newest first; never raises."""
        while self._undo:
            with contextlib.suppress(Exception):
                self._undo.pop()()


def build_topology(workdir: Path) -> Topology:
    """Build namespaces, addresses, keys and two sshd; on failure, undo what was done and raise."""
    octet = 20 + os.getpid() % 200
    # CI sets SCOUT_TEST_RUN_ID so its exit trap can remove anything a crashed run left behind.
    prefix = os.environ.get("SCOUT_TEST_RUN_ID", "")[:9] or f"sc{os.getpid() % 10000}"
    head = SshdHost("head", f"{prefix}-head", f"10.78.{octet}.2", workdir / "head")
    worker = SshdHost("worker", f"{prefix}-worker", f"192.168.201.{octet}", workdir / "worker")
    topology = Topology(head, worker, workdir / "id_ed25519", workdir / "known_hosts")
    try:
        _build(topology, prefix, octet)
    except Exception:
        topology.teardown()
        raise
    return topology


def _build(topology: Topology, prefix: str, octet: int) -> None:
    head, worker, undo = topology.head, topology.worker, topology._undo
    for host in (head, worker):
        with contextlib.suppress(CommandFailed):  # leftovers of a crashed run
            run(["ip", "netns", "del", host.namespace])
        run(["ip", "netns", "add", host.namespace])
        undo.append(lambda ns=host.namespace: run(["ip", "netns", "del", ns]))
        run(["ip", "-n", host.namespace, "link", "set", "lo", "up"])

    route = f"{worker.address}/32"
    run(["ip", "route", "add", "unreachable", route])  # SAFETY first: nothing leaves the machine
    undo.append(lambda: run(["ip", "route", "del", "unreachable", route]))

    outer, inner = f"{prefix}h0", f"{prefix}h1"
    run(
        ["ip", "link", "add", outer, "type", "veth", "peer", "name", inner, "netns", head.namespace]
    )
    undo.append(lambda: run(["ip", "link", "del", outer], check=False))
    run(["ip", "addr", "add", f"10.78.{octet}.1/24", "dev", outer])
    run(["ip", "link", "set", outer, "up"])
    run(["ip", "-n", head.namespace, "addr", "add", f"{head.address}/24", "dev", inner])
    run(["ip", "-n", head.namespace, "link", "set", inner, "up"])

    w0, w1 = f"{prefix}w0", f"{prefix}w1"
    run(["ip", "-n", head.namespace, "link", "add", w0, "type", "veth", "peer", "name", w1,
          "netns", worker.namespace])  # fmt: skip
    run(["ip", "-n", head.namespace, "addr", "add", "192.168.201.1/24", "dev", w0])
    run(["ip", "-n", head.namespace, "link", "set", w0, "up"])
    run(["ip", "-n", worker.namespace, "addr", "add", f"{worker.address}/24", "dev", w1])
    run(["ip", "-n", worker.namespace, "link", "set", w1, "up"])

    new_key(topology.client_key)
    Path("/run/sshd").mkdir(parents=True, exist_ok=True)
    for host in (head, worker):
        _start_sshd(host, topology.client_key.with_suffix(".pub"), undo)
    topology.known_hosts.write_text("".join(f"{h.known_hosts_line()}\n" for h in (head, worker)))


def _start_sshd(host: SshdHost, client_pub: Path, undo: list[Callable[[], None]]) -> None:
    host.workdir.mkdir(parents=True)
    key = host.workdir / "host_ed25519"
    host.host_key_pub = new_key(key)
    authorized = host.workdir / "authorized_keys"
    shutil.copy(client_pub, authorized)
    config = write_sshd_config(
        host.workdir / "sshd_config",
        listen="0.0.0.0",
        port=22,
        host_key=key,
        pid_file=host.pid_file,
        authorized_keys=authorized,
        host_state=host.workdir,
        extra=[
            "AllowTcpForwarding yes",
            "LogLevel VERBOSE",  # a line per session a client opens ("Starting session:")
        ],
    )
    # `ip netns exec` mounts a fresh /sys without the cgroup file systems; a real host has
    # cgroup2 at /sys/fs/cgroup (the wall's address filter needs it), so mount it there again.
    cgroup2 = "mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null; "
    start = (
        f"{cgroup2}hostname {host.name} && exec {SSHD} -f {config} -E {host.workdir / 'sshd.log'}"
    )
    run(["ip", "netns", "exec", host.namespace, "unshare", "--uts", "sh", "-c", start])
    undo.append(lambda: _stop_namespace_processes(host))
    wait_until_listening(host.pid_file, host.workdir / "sshd.log")


def _stop_namespace_processes(host: SshdHost) -> None:
    """Stop sshd by its pid file, then anything it left running inside our namespace."""
    with contextlib.suppress(OSError, ValueError):
        os.kill(int(host.pid_file.read_text().strip()), signal.SIGTERM)
    pids = run(["ip", "netns", "pids", host.namespace], check=False).stdout.split()
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(int(pid), signal.SIGKILL)
