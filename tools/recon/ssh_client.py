"""OpenSSH's own client for one host, started before the command it runs is built.

Why first: `ssh` spends about as long connecting (key exchange, login) as the probe then spends
on the host, and building the probe's command line means importing the probe and the wall. So
`ssh` starts as soon as the inventory is read, told to run what it reads on its stdin, in the
login shell that would otherwise have run the command line itself (`eval "$(cat)"`); the line
follows on stdin once built, while ssh connects. Nothing of it waits on stdin's end either: the
shell reads the whole line before it runs any of it, so the commands see stdin at its end, as
they would under `ssh -n`, and no command can read a part of the line as its input.

As strict as the pool, by construction: `ssh` reads no config (`-F /dev/null`: the inventory
has resolved it already) and gets, as options, what the pool's connect gets: the inventory's
known_hosts file and no other (`GlobalKnownHostsFile none`), checked strictly and never written,
the same user, port, keys, agent and `IdentitiesOnly` (tools/ssh/login.py follows OpenSSH's
order), no prompts, no forwarding, the pool's connect timeout and keepalive.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING

from tools.ssh.capped_buffer import OUTPUT_CAP_BYTES, CappedBuffer

if TYPE_CHECKING:
    from tools.ssh.inventory import HostSpec

SSH_FAILED = 255  # ssh's own exit status for its own failures
CONNECT_TIMEOUT_S = 10  # the pool's connect_timeout
KEEPALIVE_S, KEEPALIVE_COUNT = 15, 3  # the pool's keepalive_interval and keepalive_count_max
# the remote command: the login shell runs the line that comes on stdin, all of it read first
RUN_WHAT_STDIN_SAYS = 'eval "$(cat)"'
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
    command = [ssh, "-F", "/dev/null", "-T", "-e", "none"]
    command += [f"-oUserKnownHostsFile={known_hosts}"]
    command += [f"-o{option}" for option in STRICT_OPTIONS]
    if agent is not None and agent != "SSH_AUTH_SOCK":  # unset: $SSH_AUTH_SOCK, as for ssh
        command += [f"-oIdentityAgent={agent}"]
    command += [f"-oIdentitiesOnly={'yes' if spec.identities_only else 'no'}"]
    for key in keys:
        command += ["-i", key]
    return [*command, "-p", str(spec.port), "-l", spec.user, "--", spec.address]


class OpenSSHRun:
    """One `ssh` under way: connecting at once, running the line `send` gives it, its output
    read into capped buffers as it comes."""

    def __init__(self, ssh: list[str]) -> None:
        self.ssh = ssh
        self.started = time.monotonic()
        self.started_at = time.time()  # when the host was asked, for the facts' time
        self.process = subprocess.Popen(
            [*ssh, RUN_WHAT_STDIN_SAYS],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
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

    def send(self, line: str) -> None:
        """Give ssh the command line to run, then end its stdin. Written on a thread of its own:
        a line longer than the pipe holds waits for ssh to connect and read it."""
        assert self.process.stdin is not None
        writer = threading.Thread(
            target=_write_and_close, args=(self.process.stdin, line.encode()), daemon=True
        )
        writer.start()

    def wait(self, limit_s: float) -> int | None:
        """ssh's exit status once its output has ended; None where it ran `limit_s` seconds
        from its start (then it is ended here; the host's `timeout` ends the commands there)."""
        deadline = self.started + limit_s
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


def start_ssh(spec: HostSpec, known_hosts: Path) -> OpenSSHRun | None:
    """`ssh` to `spec`, connecting; None where OpenSSH's client is missing (not on PATH, which
    the start itself searches) or could not be told exactly what the pool does."""
    command = ssh_command(spec, known_hosts, "ssh")
    if command is None:
        return None
    try:
        return OpenSSHRun(command)
    except FileNotFoundError:
        return None


def _drain(stream: IO[bytes], buffer: CappedBuffer) -> None:
    while chunk := os.read(stream.fileno(), 65536):
        buffer.add(chunk)
    stream.close()


def _write_and_close(stdin: IO[bytes], data: bytes) -> None:
    try:
        stdin.write(data)
        stdin.close()
    except OSError:  # ssh ended before it read the line (it failed to connect): it says why
        return
