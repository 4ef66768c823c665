"""A host whose system bus is a private dbus-daemon, reached through a real sshd on loopback.

The daemon (tests/support/private_bus.py) stands in for the host's system bus: sshd's sessions
name it in DBUS_SYSTEM_BUS_ADDRESS (`SetEnv`), as a host's environment may, so the wall's helper
finds the bus where a host's D-Bus clients would and its proxy connects upstream to it. sshd runs
in a mount namespace of its own with a fresh /run holding /run/systemd/system, as a host booted
with systemd has it: systemd's tools talk to no bus without it (sd_booted(3)), and no
/run/systemd/private is there, as none is reachable inside the wall. Key-only root logins on a
free loopback port; everything is undone on exit.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.private_bus import private_bus
from tests.support.sshd import (
    SSHD,
    START_WAIT_S,
    SshdDidNotStart,
    new_key,
    wait_until_listening,
    write_sshd_config,
)

PORT_TRIES = 5


@dataclass(frozen=True)
class BusHost:
    """Where the bus is and how to log in to the sshd whose sessions name it."""

    address: str
    port: int
    root: Path

    def inventory_data(self) -> dict[str, object]:
        return {
            "known_hosts": str(self.root / "known_hosts"),
            "defaults": {"user": "root", "identity_file": str(self.root / "id_ed25519")},
            "hosts": {"bus": {"address": "127.0.0.1", "port": self.port}},
        }


@contextlib.contextmanager
def bus_host() -> Iterator[BusHost]:
    root = Path(tempfile.mkdtemp(prefix="sbush", dir="/tmp"))
    try:
        with private_bus() as address:
            new_key(root / "id_ed25519")
            host_key = new_key(root / "host_ed25519")
            shutil.copy(root / "id_ed25519.pub", root / "authorized_keys")
            Path("/run/sshd").mkdir(parents=True, exist_ok=True)
            with _sshd(root, address) as port:
                (root / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_key}\n")
                yield BusHost(address, port, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def _sshd(root: Path, address: str) -> Iterator[int]:
    """`sshd -D` on a free loopback port (another process may take a probed port before sshd
    binds it: then another), its sessions' DBUS_SYSTEM_BUS_ADDRESS the private bus."""
    for _ in range(PORT_TRIES):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        pid_file, log = root / "sshd.pid", root / "sshd.log"
        config = write_sshd_config(
            root / "sshd_config", listen="127.0.0.1", port=port, host_key=root / "host_ed25519",
            pid_file=pid_file, authorized_keys=root / "authorized_keys", host_state=root,
            env={"DBUS_SYSTEM_BUS_ADDRESS": address}, extra=["MaxSessions 64"],
        )  # fmt: skip
        booted = "mount -t tmpfs scout-run /run && mkdir -p /run/sshd /run/systemd/system"
        sshd = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c",
             f'{booted} && exec "$0" -D -f "$1" -E "$2"', str(SSHD), str(config), str(log)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        try:
            wait_until_listening(pid_file, log, sshd)
        except SshdDidNotStart as exc:
            sshd.wait(timeout=START_WAIT_S)
            if "Address already in use" in str(exc):
                continue
            raise
        try:
            yield port
        finally:
            sshd.terminate()
            sshd.wait(timeout=START_WAIT_S)
        return
    raise SshdDidNotStart(f"every one of {PORT_TRIES} free ports was taken before sshd bound it")
