"""Sixteen real OpenSSH hosts for the pool's scale test: a head reachable from here and fifteen
workers reachable only through it, every sshd with OpenSSH's default MaxSessions (10).

Two network namespaces (names unique per run): the head's, joined to this one by a veth pair,
and the workers', joined to the head's; the workers' namespace holds fifteen addresses, one sshd
listening on each with its own host key and hostname. An `unreachable` route per worker address
in this namespace makes a direct connect fail here instead of leaving the machine. `teardown()`
undoes every step, newest first, and is safe after a partial build.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.sshd import SSHD, wait_until_listening, write_sshd_config


@dataclass
class FleetHost:
    name: str
    address: str
    workdir: Path
    host_key_pub: str = ""

    @property
    def pid_file(self) -> Path:
        return self.workdir / "sshd.pid"


@dataclass
class SshdFleet:
    head: FleetHost
    workers: list[FleetHost]
    namespaces: tuple[str, str]
    client_key: Path
    known_hosts: Path
    _undo: list[Callable[[], None]] = field(default_factory=list)

    def inventory_data(self) -> dict[str, object]:
        hosts: dict[str, object] = {"head": {"address": self.head.address, "roles": ["head"]}}
        for worker in self.workers:
            hosts[worker.name] = {"address": worker.address, "jump": "head", "roles": ["worker"]}
        return {
            "known_hosts": str(self.known_hosts),
            "defaults": {"user": "root", "identity_file": str(self.client_key)},
            "hosts": hosts,
        }

    def session_processes(self) -> list[str]:
        """Command lines of the per-connection sshd processes in the head's namespace."""
        pids = _run(["ip", "netns", "pids", self.namespaces[0]], check=False).stdout.split()
        found = []
        for pid in pids:
            with contextlib.suppress(OSError):
                line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                if "@notty" in line:
                    found.append(line.strip())
        return found

    def teardown(self) -> None:
        while self._undo:
            with contextlib.suppress(Exception):
                self._undo.pop()()


def _run(args: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, check=check, capture_output=True, text=True, timeout=30)


def build_fleet(workdir: Path, workers: int = 15) -> SshdFleet:
    octet = 20 + os.getpid() % 200
    prefix = os.environ.get("SCOUT_TEST_RUN_ID", "")[:8] or f"sf{os.getpid() % 10000}"
    head = FleetHost("head", f"10.79.{octet}.2", workdir / "head")
    nodes = [
        FleetHost(f"worker-{i + 1:02d}", f"192.168.202.{10 + i}", workdir / f"worker-{i + 1:02d}")
        for i in range(workers)
    ]
    fleet = SshdFleet(
        head, nodes, (f"{prefix}-fh", f"{prefix}-fw"), workdir / "id_ed25519", workdir / "kh"
    )
    try:
        _build(fleet, prefix, octet)
    except Exception:
        fleet.teardown()
        raise
    return fleet


def _build(fleet: SshdFleet, prefix: str, octet: int) -> None:
    undo = fleet._undo
    head_ns, workers_ns = fleet.namespaces
    for namespace in fleet.namespaces:
        with contextlib.suppress(subprocess.CalledProcessError):  # leftovers of a crashed run
            _run(["ip", "netns", "del", namespace])
        _run(["ip", "netns", "add", namespace])
        undo.append(lambda ns=namespace: _run(["ip", "netns", "del", ns]))
        _run(["ip", "-n", namespace, "link", "set", "lo", "up"])
    for worker in fleet.workers:  # SAFETY first: nothing for the workers leaves the machine
        route = f"{worker.address}/32"
        _run(["ip", "route", "add", "unreachable", route])
        undo.append(lambda r=route: _run(["ip", "route", "del", "unreachable", r]))

    outer, inner = f"{prefix}f0", f"{prefix}f1"
    _run(["ip", "link", "add", outer, "type", "veth", "peer", "name", inner, "netns", head_ns])
    undo.append(lambda: _run(["ip", "link", "del", outer], check=False))
    _run(["ip", "addr", "add", f"10.79.{octet}.1/24", "dev", outer])
    _run(["ip", "link", "set", outer, "up"])
    _run(["ip", "-n", head_ns, "addr", "add", f"{fleet.head.address}/24", "dev", inner])
    _run(["ip", "-n", head_ns, "link", "set", inner, "up"])

    w0, w1 = f"{prefix}g0", f"{prefix}g1"
    _run(["ip", "-n", head_ns, "link", "add", w0, "type", "veth", "peer", "name", w1,
          "netns", workers_ns])  # fmt: skip
    _run(["ip", "-n", head_ns, "addr", "add", "192.168.202.1/24", "dev", w0])
    _run(["ip", "-n", head_ns, "link", "set", w0, "up"])
    for worker in fleet.workers:
        _run(["ip", "-n", workers_ns, "addr", "add", f"{worker.address}/24", "dev", w1])
    _run(["ip", "-n", workers_ns, "link", "set", w1, "up"])

    _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(fleet.client_key)])
    Path("/run/sshd").mkdir(parents=True, exist_ok=True)
    client_pub = fleet.client_key.with_suffix(".pub")
    _start_sshd(fleet.head, head_ns, "0.0.0.0", client_pub, undo)
    for worker in fleet.workers:
        _start_sshd(worker, workers_ns, worker.address, client_pub, undo)
    fleet.known_hosts.write_text(
        "".join(f"{h.address} {h.host_key_pub}\n" for h in (fleet.head, *fleet.workers))
    )


def _start_sshd(
    host: FleetHost, namespace: str, listen: str, client_pub: Path, undo: list[Callable[[], None]]
) -> None:
    """One sshd with OpenSSH's defaults for sessions (MaxSessions 10) and forwarding allowed."""
    host.workdir.mkdir(parents=True)
    key = host.workdir / "host_ed25519"
    _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)])
    host.host_key_pub = " ".join(key.with_suffix(".pub").read_text().split()[:2])
    config = write_sshd_config(
        host.workdir / "sshd_config",
        listen=listen,
        port=22,
        host_key=key,
        pid_file=host.pid_file,
        authorized_keys=client_pub,
        host_state=host.workdir,
        extra=["AllowTcpForwarding yes"],
    )
    start = f"hostname {host.name} && exec {SSHD} -f {config} -E {host.workdir / 'sshd.log'}"
    _run(["ip", "netns", "exec", namespace, "unshare", "--uts", "sh", "-c", start])
    undo.append(lambda: _stop(host, namespace))
    wait_until_listening(host.pid_file, host.workdir / "sshd.log")


def _stop(host: FleetHost, namespace: str) -> None:
    """Stop this sshd by its pid file, then whatever is left in its namespace."""
    with contextlib.suppress(OSError, ValueError):
        os.kill(int(host.pid_file.read_text().strip()), signal.SIGTERM)
    for pid in _run(["ip", "netns", "pids", namespace], check=False).stdout.split():
        with contextlib.suppress(OSError):
            os.kill(int(pid), signal.SIGKILL)
