"""The probe pack over OpenSSH's own client: how `scout recon` asks the hosts it can.

Why: importing asyncssh and the cryptography it needs costs a Python process more than OpenSSH's
whole `ssh host true` (connect, key exchange, login, one command). Recon needs one round trip
per host, so it starts `ssh` first (tools/recon/ssh_client.py: as strict as the pool), sends it
the probe's line while it connects, and imports what reading the answers needs while the host
works; the pooled asyncssh connections (tools/ssh/pool.py) stay for everything else. The
commands are the ones the pool would send (remote_command.wrap_command), the probe's inside part
walled.

Anything but a plain answer goes the pool's way, which then does what it always did (trust on
first use when asked, passphrase prompts, installing the wall's helper, Scout's own diagnosis):
ssh's own failures (exit 255: an unknown or changed host key, a refused login, a key that needs
its passphrase), a host behind a jump host, a path OpenSSH would expand (`%`, `~`, `$`) or split
(blanks, quotes). One failure is said here: a refused connection, which the pool also reports
after one try (as `ssh` does). The wall's own repeats are the pool's (probe.probe_host): the
helper sent along where the host lacks it, the pack run unwalled where the wall cannot be built.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from tools.recon.probe import (
    PROBE_TIMEOUT_S,
    PROBE_WALL,
    build_probe_script,
    host_facts,
    why_unwalled,
)
from tools.recon.ssh_client import OpenSSHRun
from tools.ssh.errors import HostUnreachableError, unreachable_message
from tools.ssh.remote_command import (
    LOCAL_GRACE_S,
    TIMEOUT_EXIT_CODES,
    CommandResult,
    new_marker,
    wrap_command,
)
from tools.wall.command import WallSpec, helper_missing, unwalled_reason

if TYPE_CHECKING:
    from tools.ssh.inventory import HostSpec
    from tools.world.facts import HostFacts

INSIDE, OUTSIDE = build_probe_script("inside"), build_probe_script("outside")
PART_END = "@@scout:part {part} {status}@@"
LIMIT_S = PROBE_TIMEOUT_S + LOCAL_GRACE_S  # the host's own limit, then a grace here


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
    run: OpenSSHRun

    @classmethod
    def send(cls, spec: HostSpec, run: OpenSSHRun) -> OpenSSHProbe:
        """Give `run`, connecting to `spec` (ssh_client.start_ssh), the probe's line."""
        run.send(probe_line())
        return cls(spec, run)

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
        collected_at = datetime.fromtimestamp(self.run.started_at, UTC)
        return host_facts(self.spec.name, inside, outside, collected_at, unwalled)

    def _parts(self) -> tuple[CommandResult | None, CommandResult | None]:
        exit_status = self.run.wait(LIMIT_S)
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
        run = OpenSSHRun(self.run.ssh)
        run.send(_wrapped(INSIDE, wall, install_wall))
        exit_status = run.wait(LIMIT_S)
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
