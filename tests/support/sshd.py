"""What the real-sshd test hosts share: running root commands, host keys and the sshd_config.

tests/support/sshd_topology.py (head and worker in network namespaces) and tests/support/dockerd.py
(a private dockerd behind sshd on loopback) both start OpenSSH's sshd this way.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

SSHD = Path("/usr/sbin/sshd")


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
