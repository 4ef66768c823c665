"""What the real-sshd test hosts share: running root commands, host keys, the sshd_config and
the wait until an sshd accepts connections.

tests/support/sshd_topology.py (head and worker in network namespaces), tests/support/sshd_fleet.py
and tests/support/dockerd.py (a private dockerd behind sshd on loopback) start OpenSSH's sshd
this way.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

SSHD = Path("/usr/sbin/sshd")
# Only bounds a hang: a loaded two-core CI machine can take many seconds to start a daemon, and
# a wait it trips fails a test that had nothing wrong.
START_WAIT_S = 120.0


class CommandFailed(RuntimeError):
    """A setup command exited non-zero; the message carries its stderr."""


def run(
    args: list[str], *, check: bool = True, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise CommandFailed(f"{' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done


def new_key(path: Path) -> str:
    """Make an ed25519 key pair at `path`; the public key as `type base64` (known_hosts form)."""
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)])
    return " ".join(path.with_suffix(".pub").read_text().split()[:2])


def write_sshd_config(
    path: Path,
    *,
    listen: str,
    port: int,
    host_key: Path,
    pid_file: Path,
    authorized_keys: Path,
    extra: Sequence[str] = (),
) -> Path:
    """Key-only logins, no PAM, no strict modes on the test folders; `extra` lines after those.

    The file is checked with `sshd -t` before it is returned.
    """
    lines = [
        f"ListenAddress {listen}",
        f"Port {port}",
        f"HostKey {host_key}",
        f"PidFile {pid_file}",
        f"AuthorizedKeysFile {authorized_keys}",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PermitRootLogin prohibit-password",
        "UsePAM no",
        "StrictModes no",
        *extra,
        "",
    ]
    path.write_text("\n".join(lines))
    run([str(SSHD), "-t", "-f", str(path)])
    return path


class SshdDidNotStart(RuntimeError):
    """sshd exited, or wrote no pid file within START_WAIT_S; the message carries its log."""


def wait_until_listening(
    pid_file: Path, log: Path, process: subprocess.Popen[bytes] | None = None
) -> None:
    """Return once sshd has written `pid_file`: it does so only after it listens on every
    address (sshd.c: server_listen() comes before the pid file), so a connection made from
    then on is accepted. Raises SshdDidNotStart at once when `process` (an `sshd -D`) exits."""
    deadline = time.monotonic() + START_WAIT_S
    while not pid_file.exists():
        exited = process is not None and process.poll() is not None
        if exited or time.monotonic() > deadline:
            said = log.read_text(errors="replace").strip() if log.exists() else ""
            why = "exited" if exited else f"wrote no pid file within {START_WAIT_S:g} s"
            raise SshdDidNotStart(f"sshd {why}; its log ({log}): {said or 'empty'}")
        time.sleep(0.02)
