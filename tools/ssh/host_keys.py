"""Host key verification against a known_hosts file, with trust-on-first-use only when asked.

asyncssh checks the keys it was given itself; a key it does not find there is passed to
`HostKeyPolicy.decide`, which tells an unknown host (refused, or recorded with `trust_new_hosts`)
from a changed one (always refused: that is what an interception looks like).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import asyncssh
import structlog

from tools.ssh.errors import HostKeyError

NewHostKeyCallback = Callable[[str, str], None]

log = structlog.get_logger()


def known_hosts_pattern(address: str, port: int) -> str:
    """The host column OpenSSH writes for this address and port."""
    return address if port == 22 else f"[{address}]:{port}"


class HostKeyPolicy:
    """Decides about host keys that are not in known_hosts, and records trusted new ones."""

    def __init__(
        self,
        known_hosts_path: Path,
        *,
        trust_new_hosts: bool = False,
        on_new_host_key: NewHostKeyCallback | None = None,
    ) -> None:
        self.path = known_hosts_path
        self.trust_new_hosts = trust_new_hosts
        self.on_new_host_key = on_new_host_key

    def known_hosts(self) -> asyncssh.SSHKnownHosts:
        """The current file's contents (read on each connect so recorded keys count at once)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        return asyncssh.import_known_hosts(text)

    def decide(
        self, name: str, address: str, port: int, key: asyncssh.SSHKey
    ) -> HostKeyError | None:
        """None accepts `key`; otherwise the refusal to raise once the handshake fails."""
        fingerprint = key.get_fingerprint("sha256")
        where = f"{name} ({address}:{port})"
        recorded = self.known_hosts().match(address, "", port if port != 22 else None)[0]
        if recorded:
            old = ", ".join(k.get_fingerprint("sha256") for k in recorded)
            pattern = known_hosts_pattern(address, port)
            return HostKeyError(
                f"HOST KEY CHANGED for {where}: {self.path} records {old} but the host now "
                f"presents {key.get_algorithm()} {fingerprint}. This can mean the connection is "
                "being intercepted, so Scout refuses it. If the host was really reinstalled, "
                f"remove the old key with `ssh-keygen -R {shlex.quote(pattern)} -f {self.path}` "
                "and connect again with --trust-new-hosts (or add the new key with ssh-keyscan)."
            )
        if not self.trust_new_hosts:
            return HostKeyError(
                f"unknown host key for {where}: {key.get_algorithm()} {fingerprint} is not in "
                f"{self.path}. If that fingerprint is right, run again with --trust-new-hosts, "
                f"or add the key yourself: `ssh-keyscan -p {port} {address} >> {self.path}`."
            )
        self._record(address, port, key)
        log.warning("ssh.new_host_key_trusted", host=name, fingerprint=fingerprint)
        if self.on_new_host_key is not None:
            self.on_new_host_key(name, fingerprint)
        return None

    def _record(self, address: str, port: int, key: asyncssh.SSHKey) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = f"{known_hosts_pattern(address, port)} {key.export_public_key().decode().strip()}\n"
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)
