"""The probe pack over OpenSSH's own client: how `scout recon` asks the hosts it can.

Why: importing asyncssh and the cryptography it needs costs a Python process more than OpenSSH's
whole `ssh host true` (connect, key exchange, login, one command). Recon needs one round trip
per host, so it spawns `ssh` first and imports what reading the answers needs while the host
works; the pooled asyncssh connections (tools/ssh/pool.py) stay for everything else.

As strict as the pool, by construction: `ssh` reads no config (`-F /dev/null`: the inventory
has resolved it already) and gets, as options, what the pool's connect gets: the inventory's
known_hosts file and no other (`GlobalKnownHostsFile none`), checked strictly and never written,
the same user, port, keys, agent and `IdentitiesOnly` (tools/ssh/login.py follows OpenSSH's
order), no prompts, no forwarding, the pool's connect timeout and keepalive. The commands are
the ones the pool would send (remote_command.wrap_command), the probe's inside part walled.

Anything but a plain answer goes the pool's way, which then does what it always did (trust on
first use when asked, passphrase prompts, installing the wall's helper, Scout's own diagnosis):
ssh's own failures (exit 255: an unknown or changed host key, a refused login, a key that needs
its passphrase), a host behind a jump host, a path OpenSSH would expand (`%`, `~`, `$`) or split
(blanks, quotes). One failure is said here: a refused connection, which the pool also reports
after one try (as `ssh` does). The wall's own repeats are the pool's (probe.probe_host): the
helper sent along where the host lacks it, the pack run unwalled where the wall cannot be built.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING

from tools.recon.probe import (
    PROBE_TIMEOUT_S,
    PROBE_WALL,
    build_probe_script,
    host_facts,
    why_unwalled,
)
from tools.ssh.errors import HostUnreachableError, unreachable_message
from tools.ssh.remote_command import (
    LOCAL_GRACE_S,
    OUTPUT_CAP_BYTES,
    TIMEOUT_EXIT_CODES,
    CappedBuffer,
    CommandResult,
    wrap_command,
)
from tools.wall.command import WallSpec, helper_missing, unwalled_reason

if TYPE_CHECKING:
    from tools.ssh.inventory import HostSpec
    from tools.world.facts import HostFacts

SSH_FAILED = 255  # ssh's own exit status for its own failures
CONNECT_TIMEOUT_S = 10  # the pool's connect_timeout
KEEPALIVE_S, KEEPALIVE_COUNT = 15, 3  # the pool's keepalive_interval and keepalive_count_max
# ssh: connect to host 127.0.0.1 port 2222: Connection refused (ssh ends its own lines with \r\n)
_REFUSED = re.compile(r"^ssh: connect to host \S+ port \d+: Connection refused\r?$", re.MULTILINE)
# what OpenSSH would expand or split in an option's value, or read as an option or a user
_UNSAFE_VALUE = re.compile(r"[\s\"'%$\\]|^~")
_UNSAFE_DESTINATION = re.compile(r"^-|[@\s]")

# Everything the pool's asyncssh.connect does not do, turned off; nothing read from a config.
STRICT_OPTIONS = (
    "BatchMode=yes",
    "StrictHostKeyChecking=yes",
    "GlobalKnownHostsFile=none",
    "UpdateHostKeys=no",
    "CheckHostIP=no",
    "VerifyHostKeyDNS=no",
    "CanonicalizeHostname=no",
    f"ConnectTimeout={CONNECT_TIMEOUT_S}",
    "ConnectionAttempts=1",
    f"ServerAliveInterval={KEEPALIVE_S}",
    f"ServerAliveCountMax={KEEPALIVE_COUNT}",
    "PasswordAuthentication=no",
    "KbdInteractiveAuthentication=no",
    "HostbasedAuthentication=no",
    "GSSAPIAuthentication=no",
    "ForwardAgent=no",
    "ForwardX11=no",
    "ClearAllForwardings=yes",
    "PermitLocalCommand=no",
    "ProxyCommand=none",
    "ProxyJump=none",
    "ControlMaster=no",
    "ControlPath=none",
    "LogLevel=ERROR",
)


def ssh_command(spec: HostSpec, known_hosts: Path, ssh: str) -> list[str] | None:
    """`ssh …` for `spec`, a remote command to follow; None where OpenSSH could not be told
    exactly what the pool does (a jump host, a value it would expand or split)."""
    keys = [str(path) for path in spec.identity_files]
    agent = spec.identity_agent
    values = [str(known_hosts), *keys, *([agent] if agent else [])]
    if spec.jump is not None or any(_UNSAFE_VALUE.search(value) for value in values):
        return None
    if _UNSAFE_DESTINATION.search(spec.address) or _UNSAFE_VALUE.search(spec.user):
        return None
    command = [ssh, "-F", "/dev/null", "-T", "-n", "-e", "none"]
    command += [f"-oUserKnownHostsFile={known_hosts}"]
    command += [f"-o{option}" for option in STRICT_OPTIONS]
    if agent is not None and agent != "SSH_AUTH_SOCK":  # unset: $SSH_AUTH_SOCK, as for ssh
        command += [f"-oIdentityAgent={agent}"]
    command += [f"-oIdentitiesOnly={'yes' if spec.identities_only else 'no'}"]
    for key in keys:
        command += ["-i", key]
    return [*command, "-p", str(spec.port), "-l", spec.user, "--", spec.address]


class _Run:
    """One `ssh … COMMAND` under way: its output read into capped buffers as it comes."""

    def __init__(
        self,
        ssh: list[str],
        host: str,
        command: str,
        wall: WallSpec | None,
        install_wall: bool = False,
    ) -> None:
        self.ssh, self.host, self.command, self.wall = ssh, host, command, wall
        self.install_wall = install_wall
        marker = f"scout-run-{secrets.token_hex(8)}"
        wrapped = wrap_command(
            command, timeout=PROBE_TIMEOUT_S, marker=marker, wall=wall, install_wall=install_wall
        )
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [*ssh, wrapped], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        self.stdout, self.stderr = CappedBuffer(OUTPUT_CAP_BYTES), CappedBuffer(OUTPUT_CAP_BYTES)
        assert self.process.stdout is not None and self.process.stderr is not None
        self.readers = [
            threading.Thread(target=_drain, args=(stream, buffer), daemon=True)
            for stream, buffer in ((self.process.stdout, self.stdout),
                                   (self.process.stderr, self.stderr))
        ]  # fmt: skip
        for reader in self.readers:
            reader.start()

    def result(self) -> CommandResult | None:
        """What the command did, as the pool reports it (remote_command._run_once); None where
        ssh itself failed: the pool must ask instead."""
        deadline = self.started + PROBE_TIMEOUT_S + LOCAL_GRACE_S
        for reader in self.readers:  # they end with ssh's output (a join wakes at once)
            reader.join(max(0.0, deadline - time.monotonic()))
        exit_status: int | None = None
        if any(reader.is_alive() for reader in self.readers):  # the host's `timeout` ends it
            self.process.kill()
            self.process.wait()
            for reader in self.readers:
                reader.join()
        else:
            exit_status = self.process.wait()
        stdout, duration = self.stdout.text(), time.monotonic() - self.started
        if exit_status == SSH_FAILED and "@@scout:" not in stdout:
            return None
        refused = None
        if self.wall is not None:
            refused = unwalled_reason(exit_status, stdout)
            if helper_missing(exit_status, stdout):
                refused = "the wall helper could not be installed on the host"
        timed_out = exit_status is None or (
            exit_status in TIMEOUT_EXIT_CODES and duration >= PROBE_TIMEOUT_S
        )
        return CommandResult(
            host=self.host, command=self.command, exit_status=exit_status, stdout=stdout,
            stderr=self.stderr.text(), timed_out=timed_out, duration_s=duration,
            stdout_omitted_bytes=self.stdout.omitted, stderr_omitted_bytes=self.stderr.omitted,
            walled=self.wall is not None and refused is None, unwalled=refused,
        )  # fmt: skip

    def refused_connection(self) -> bool:
        return self.process.returncode == SSH_FAILED and bool(_REFUSED.search(self.stderr.text()))


def _drain(stream: IO[bytes], buffer: CappedBuffer) -> None:
    while chunk := os.read(stream.fileno(), 65536):
        buffer.add(chunk)
    stream.close()


@dataclass
class OpenSSHProbe:
    """The probe's two parts (inside the wall, and beside it) under way on one host."""

    spec: HostSpec
    inside: _Run
    outside: _Run
    collected_at: datetime

    def stop(self) -> None:
        """End both parts here; the host's `timeout` (and sshd, at the hang-up) ends them there."""
        for run in (self.inside, self.outside):
            run.process.kill()
            run.process.wait()

    def facts(self) -> HostFacts | None:
        """The host's facts, or None: the pool must probe it (see the module's docstring).
        Raises SSHError as the pool's probe does."""
        inside, outside = self.inside.result(), self.outside.result()
        run = self.inside
        if inside is not None and run.wall and helper_missing(inside.exit_status, inside.stdout):
            run = _Run(run.ssh, run.host, run.command, run.wall, install_wall=True)
            inside = run.result()  # the pool's one repeat, with the helper sent along
        if run.refused_connection() or self.outside.refused_connection():
            raise HostUnreachableError(unreachable_message(self.spec, "Connection refused"))
        if inside is None or outside is None:
            return None
        unwalled = why_unwalled(inside)
        if unwalled is not None:  # the pack is Scout's own: it runs anyway, as probe_host does
            run = _Run(run.ssh, run.host, run.command, None)
            inside = run.result()
            if inside is None:
                return None
        return host_facts(self.spec.name, inside, outside, self.collected_at, unwalled)


def start_probe(spec: HostSpec, known_hosts: Path) -> OpenSSHProbe | None:
    """Start the probe on `spec` through `ssh`; None where OpenSSH's client is missing or could
    not be told exactly what the pool does."""
    ssh = shutil.which("ssh")
    command = ssh_command(spec, known_hosts, ssh) if ssh else None
    if command is None:
        return None
    collected_at = datetime.now(UTC)
    inside = _Run(command, spec.name, build_probe_script("inside"), PROBE_WALL)
    outside = _Run(command, spec.name, build_probe_script("outside"), None)
    return OpenSSHProbe(spec, inside, outside, collected_at)
