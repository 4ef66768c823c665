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
    new_marker,
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
INSIDE, OUTSIDE = build_probe_script("inside"), build_probe_script("outside")
PART_END = "@@scout:part {part} {status}@@"

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
    """One `ssh … LINE` under way: its output read into capped buffers as it comes."""

    def __init__(self, ssh: list[str], line: str) -> None:
        self.ssh = ssh
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [*ssh, line], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.stdout, self.stderr = CappedBuffer(OUTPUT_CAP_BYTES), CappedBuffer(OUTPUT_CAP_BYTES)
        assert self.process.stdout is not None and self.process.stderr is not None
        self.readers = [
            threading.Thread(target=_drain, args=(stream, buffer), daemon=True)
            for stream, buffer in ((self.process.stdout, self.stdout),
                                   (self.process.stderr, self.stderr))
        ]  # fmt: skip
        for reader in self.readers:
            reader.start()

    def wait(self) -> int | None:
        """ssh's exit status once its output has ended; None where it ran past the probe's time
        (then it is ended here; the host's `timeout` ends the commands there)."""
        deadline = self.started + PROBE_TIMEOUT_S + LOCAL_GRACE_S
        for reader in self.readers:  # they end with ssh's output (a join wakes at once)
            reader.join(max(0.0, deadline - time.monotonic()))
        if any(reader.is_alive() for reader in self.readers):
            self.stop()
            for reader in self.readers:
                reader.join()
            return None
        return self.process.wait()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()

    def failed(self, exit_status: int | None) -> bool:
        """ssh itself failed (it never ran the line): nothing of Scout's came back."""
        return exit_status == SSH_FAILED and "@@scout" not in self.stdout.text()

    def refused_connection(self) -> bool:
        return self.process.returncode == SSH_FAILED and bool(_REFUSED.search(self.stderr.text()))


def _drain(stream: IO[bytes], buffer: CappedBuffer) -> None:
    while chunk := os.read(stream.fileno(), 65536):
        buffer.add(chunk)
    stream.close()


def _result(
    host: str,
    command: str,
    wall: WallSpec | None,
    exit_status: int | None,
    stdout: str,
    stderr: str,
    duration: float,
) -> CommandResult:
    """What one command did, as the pool reports it (remote_command._run_once)."""
    refused = None
    if wall is not None:
        refused = unwalled_reason(exit_status, stdout)
        if helper_missing(exit_status, stdout):
            refused = "the wall helper could not be installed on the host"
    timed_out = exit_status is None or (
        exit_status in TIMEOUT_EXIT_CODES and duration >= PROBE_TIMEOUT_S
    )
    return CommandResult(
        host=host, command=command, exit_status=exit_status, stdout=stdout, stderr=stderr,
        timed_out=timed_out, duration_s=duration, walled=wall is not None and refused is None,
        unwalled=refused,
    )  # fmt: skip


def _wrapped(command: str, wall: WallSpec | None, install_wall: bool = False) -> str:
    return wrap_command(
        command, timeout=PROBE_TIMEOUT_S, marker=new_marker(), wall=wall, install_wall=install_wall
    )


def both_parts_line(inside: str, outside: str) -> str:
    """The two parts' lines (remote_command.wrap_command) at once over one connection, as the
    pool runs them on two channels of one: the inside part's output, a line with its status,
    then the outside part's (held in the pipe meanwhile, stderr merged: only its sections are
    read) and its status. The inside part runs in a subshell, so that the wall's own `exit`
    ends only it; its stderr is ssh's."""
    return (
        f'{{ {outside} 2>&1; echo "{PART_END.format(part="outside", status="$?")}"; }} | '
        f'{{ ( {inside} ); echo "{PART_END.format(part="inside", status="$?")}"; cat; }}'
    )


def split_parts(stdout: str) -> dict[str, tuple[str, int | None]]:
    """Each part's output and status from both_parts_line's output; a part whose status line
    never came (ssh ended here, the connection dropped) has its output so far and None."""
    parts: dict[str, tuple[str, int | None]] = {}
    rest = stdout
    for part in ("inside", "outside"):
        # not anchored at a line's start: a part's output may not end its last line
        end = re.search(rf"@@scout:part {part} (\d+)@@$", rest, re.MULTILINE)
        if end is None:
            parts[part] = (rest, None)
            rest = ""
            continue
        parts[part] = (rest[: end.start()], int(end[1]))
        rest = rest[end.end() + 1 :]
    return parts


@dataclass
class OpenSSHProbe:
    """The probe's two parts (inside the wall, and beside it) under way on one host."""

    spec: HostSpec
    run: _Run
    collected_at: datetime

    def stop(self) -> None:
        """End it here; the host's `timeout` (and sshd, at the hang-up) ends it there."""
        self.run.stop()

    def facts(self) -> HostFacts | None:
        """The host's facts, or None: the pool must probe it (see the module's docstring).
        Raises SSHError as the pool's probe does."""
        inside, outside = self._parts()
        if inside is not None and helper_missing(inside.exit_status, inside.stdout):
            inside = self._alone(PROBE_WALL, install_wall=True)  # the pool's one repeat
        if inside is None or outside is None:
            return None
        unwalled = why_unwalled(inside)
        if unwalled is not None:  # the pack is Scout's own: it runs anyway, as probe_host does
            inside = self._alone(None)
            if inside is None:
                return None
        return host_facts(self.spec.name, inside, outside, self.collected_at, unwalled)

    def _parts(self) -> tuple[CommandResult | None, CommandResult | None]:
        exit_status = self.run.wait()
        if self.run.refused_connection():
            raise HostUnreachableError(unreachable_message(self.spec, "Connection refused"))
        if self.run.failed(exit_status):
            return None, None
        duration = time.monotonic() - self.run.started
        parts = split_parts(self.run.stdout.text())
        (inside_out, inside_status), (outside_out, outside_status) = parts.values()
        stderr = self.run.stderr.text()
        return (
            _result(self.spec.name, INSIDE, PROBE_WALL, inside_status, inside_out, stderr,
                    duration),
            _result(self.spec.name, OUTSIDE, None, outside_status, outside_out, "", duration),
        )  # fmt: skip

    def _alone(self, wall: WallSpec | None, install_wall: bool = False) -> CommandResult | None:
        """The inside part again, on its own connection (None where ssh failed)."""
        run = _Run(self.run.ssh, _wrapped(INSIDE, wall, install_wall))
        exit_status = run.wait()
        if run.failed(exit_status):
            return None
        return _result(
            self.spec.name, INSIDE, wall, exit_status, run.stdout.text(), run.stderr.text(),
            time.monotonic() - run.started,
        )  # fmt: skip


def probe_line() -> str:
    """The one command line recon sends: both parts, as the pool would wrap them (fresh
    markers each time)."""
    return both_parts_line(_wrapped(INSIDE, PROBE_WALL), _wrapped(OUTSIDE, None))


def start_probe(spec: HostSpec, known_hosts: Path) -> OpenSSHProbe | None:
    """Start the probe on `spec` through `ssh`; None where OpenSSH's client is missing or could
    not be told exactly what the pool does."""
    ssh = shutil.which("ssh")
    command = ssh_command(spec, known_hosts, ssh) if ssh else None
    if command is None:
        return None
    collected_at = datetime.now(UTC)
    return OpenSSHProbe(spec, _Run(command, probe_line()), collected_at)
