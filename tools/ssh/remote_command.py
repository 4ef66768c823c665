"""Running one command on a host so that a timeout or a cancel kills it there, not just here.

The command is wrapped in `timeout --kill-after=5s N sh -c '…'` on the host (the only method that
works whatever the login user and OpenSSH version) and carries a unique marker, in its command
line and in the environment (SCOUT_RUN) of everything it starts. A cancelled run, or one still
holding its channel after its time, is stopped by session: sshd starts every channel's command
in a session of its own (session.c calls setsid), so the host's shell finds the processes that
carry the marker and kills every process of their sessions. The process group is not enough:
GNU timeout moves itself into a group of its own (coreutils src/timeout.c: setpgid(0, 0)), so
a nested `timeout 600 sh -c 'sleep 600'` is outside the command's group, and outlives the
wrapper's own `timeout`, but stays in the session. Output is read with a cap so a chatty command
cannot fill memory.

A caller that sends one simple command (a program and its words, as the job status read does)
may skip the `sh -c` (`shell=False`): the login shell then starts `timeout` with the marker
and the environment as assignments before it, and `timeout` the program: one program started
fewer, which is most of what a short read costs the host.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from tools.ssh.capped_buffer import OUTPUT_CAP_BYTES, CappedBuffer
from tools.wall.command import WallSpec, helper_missing, split_sudo, unwalled_reason, walled_line

if TYPE_CHECKING:
    import asyncssh

# asyncio and asyncssh are imported where a command runs, not above: `scout recon` builds its
# command lines here (wrap_command) and runs them through OpenSSH (tools/recon/openssh.py).

KILL_AFTER_S = 5
LOCAL_GRACE_S = 10.0
CLEANUP_WAIT_S = 3.0
SESSION_OPEN_ATTEMPTS = 6
TIMEOUT_EXIT_CODES = frozenset({124, 137})
Opened = TypeVar("Opened")
MARKER_ENV = "SCOUT_RUN"  # a run's marker, inherited by everything it starts (jobs drop it)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _log() -> Any:
    """structlog's logger, imported when a line is logged (only on trouble): `scout recon`
    builds its commands here without loading structlog."""
    import structlog

    return structlog.get_logger()


@dataclass(frozen=True)
class SessionShortage:
    """What the caller can do when sshd still refuses a session after the retries (a host
    whose MaxSessions is lower than the pool's channels: tools/ssh/scarce_sessions.py)."""

    # True once one of the connection's sessions may be free: the open is worth another try
    free_one: Callable[[], Awaitable[bool]]
    # runs a clean-up command on a connection of its own (sshd counts sessions per connection)
    run_elsewhere: Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class CommandResult:
    """What one command did on one host; output is decoded text, capped (see *_omitted_bytes)."""

    host: str
    command: str
    exit_status: int | None
    stdout: str
    stderr: str
    timed_out: bool
    duration_s: float
    stdout_omitted_bytes: int = 0
    stderr_omitted_bytes: int = 0
    walled: bool = False  # it ran inside the wall (tools/wall/)
    unwalled: str | None = None  # the wall could not be built, so it did not run: why

    @property
    def ok(self) -> bool:
        return self.exit_status == 0 and not self.timed_out and self.unwalled is None

    @property
    def truncated(self) -> bool:
        return bool(self.stdout_omitted_bytes or self.stderr_omitted_bytes)


def new_marker() -> str:
    """A run's marker (MARKER_ENV): 16 random hex digits from os.urandom, as secrets.token_hex(8)
    draws them, without the modules `secrets` loads (hmac, random, base64) before `scout recon`
    has asked its hosts."""
    return f"scout-run-{os.urandom(8).hex()}"


def wrap_command(
    command: str,
    *,
    timeout: float,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    marker: str = "",
    shell: bool = True,
    wall: WallSpec | None = None,
    install_wall: bool = False,
) -> str:
    """The host-side command line: cd, env and the command inside a killing `timeout`.

    Without `shell`, `command` must be one simple command for the login shell (quoted words,
    no operators) and `cwd` must be None. With `wall`, `sh -c` runs inside the wall
    (tools/wall/command.py; `install_wall` sends the helper along).
    """
    if not shell:
        if wall is not None:
            raise ValueError("a walled command runs under `sh -c`")
        if cwd is not None:
            raise ValueError("a command run without `sh -c` cannot change directory")
        assigns = [f"{MARKER_ENV}={marker}"] if marker else []
        assigns += [f"{name}={shlex.quote(value)}" for name, value in _checked(env).items()]
        return " ".join([*assigns, f"timeout --kill-after={KILL_AFTER_S}s {timeout:g}s", command])
    sudo, command = split_sudo(command) if wall is not None else (False, command)
    script = shell_script(command, cwd=cwd, env=env, marker=marker)
    if wall is not None:
        return walled_line(script, wall, timeout=timeout, sudo=sudo, install=install_wall)
    return f"timeout --kill-after={KILL_AFTER_S}s {timeout:g}s sh -c {shlex.quote(script)}"


def shell_script(
    command: str, *, cwd: str | None, env: Mapping[str, str] | None, marker: str
) -> str:
    """What `sh -c` runs: the marker and the environment exported, the folder changed, then
    the command."""
    lines = [f"export {MARKER_ENV}={marker}"] if marker else []
    if cwd is not None:
        lines.append(f"cd {shlex.quote(cwd)} || exit 1")
    for name, value in _checked(env).items():
        lines.append(f"export {name}={shlex.quote(value)}")
    lines.append(command)
    return "\n".join(lines)


def _checked(env: Mapping[str, str] | None) -> Mapping[str, str]:
    for name in env or {}:
        if not _ENV_NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not a valid environment variable name")
    return env or {}


async def _drain(stream: asyncssh.SSHReader[bytes], buffer: CappedBuffer) -> None:
    while chunk := await stream.read(65536):
        buffer.add(chunk)


async def _open_session(
    conn: asyncssh.SSHClientConnection, host: str, wrapped: str, shortage: SessionShortage | None
) -> asyncssh.SSHClientProcess[bytes]:
    """Open the session, retrying a refused open: sshd frees a finished session's slot a moment
    after its channel closes, so a burst can briefly hit MaxSessions. Still refused, it is tried
    again each time the `shortage` hook says one of the connection's sessions is free. The command
    has not started when an open fails, so retrying the open never runs it twice."""
    import asyncssh

    def open_channel() -> Awaitable[asyncssh.SSHClientProcess[bytes]]:
        return conn.create_process(wrapped, stdin=asyncssh.DEVNULL, encoding=None)

    while True:
        try:
            return await retried_open(open_channel, host)
        except asyncssh.ChannelOpenError as exc:
            refused = exc.code == asyncssh.OPEN_CONNECT_FAILED
            if not (refused and shortage and await shortage.free_one()):
                raise


async def retried_open(open_channel: Callable[[], Awaitable[Opened]], host: str) -> Opened:
    """`open_channel()`, tried SESSION_OPEN_ATTEMPTS times while sshd refuses it."""
    import asyncio
    import random

    import asyncssh

    for attempt in range(SESSION_OPEN_ATTEMPTS):
        try:
            return await open_channel()
        except asyncssh.ChannelOpenError as exc:
            if exc.code != asyncssh.OPEN_CONNECT_FAILED or attempt == SESSION_OPEN_ATTEMPTS - 1:
                raise
            _log().info("ssh.session_open_retry", host=host, attempt=attempt + 1, reason=exc.reason)
            await asyncio.sleep(0.02 * 2**attempt * (1 + random.random()))
    raise AssertionError("unreachable: the last attempt re-raises")


async def _collect(
    proc: asyncssh.SSHClientProcess[bytes], stdout: CappedBuffer, stderr: CappedBuffer
) -> None:
    import asyncio

    await asyncio.gather(_drain(proc.stdout, stdout), _drain(proc.stderr, stderr))
    await proc.wait_closed()


async def run_remote(
    conn: asyncssh.SSHClientConnection,
    host: str,
    command: str,
    *,
    timeout: float,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    output_cap: int = OUTPUT_CAP_BYTES,
    on_stuck_channel: Callable[[], None] | None = None,
    shortage: SessionShortage | None = None,
    shell: bool = True,
    wall: WallSpec | None = None,
) -> CommandResult:
    """Run `command` once on `conn`; never retried. Cancelling stops it on the host too.

    With `wall`, it runs inside the wall; where the host lacks the helper, the line stops
    before running anything and is sent again with the helper (the one repeat allowed)."""
    once = functools.partial(
        _run_once, conn, host, command, timeout, cwd, env, output_cap, on_stuck_channel
    )
    result = await once(shortage, shell, wall, False)
    if wall is not None and helper_missing(result.exit_status, result.stdout):
        result = await once(shortage, shell, wall, True)
    return result


async def _run_once(
    conn: asyncssh.SSHClientConnection,
    host: str,
    command: str,
    timeout: float,
    cwd: str | None,
    env: Mapping[str, str] | None,
    output_cap: int,
    on_stuck_channel: Callable[[], None] | None,
    shortage: SessionShortage | None,
    shell: bool,
    wall: WallSpec | None,
    install_wall: bool,
) -> CommandResult:
    import asyncio

    marker = new_marker()
    wrapped = wrap_command(
        command,
        timeout=timeout,
        cwd=cwd,
        env=env,
        marker=marker,
        shell=shell,
        wall=wall,
        install_wall=install_wall,
    )
    stdout, stderr = CappedBuffer(output_cap), CappedBuffer(output_cap)
    started = time.monotonic()
    proc = await _open_session(conn, host, wrapped, shortage)
    try:
        await asyncio.wait_for(_collect(proc, stdout, stderr), timeout + LOCAL_GRACE_S)
        exit_status = proc.exit_status
        duration = time.monotonic() - started
        timed_out = exit_status in TIMEOUT_EXIT_CODES and duration >= timeout
        refused = None
        if wall is not None:
            refused = unwalled_reason(exit_status, stdout.text())
            if helper_missing(exit_status, stdout.text()):
                refused = "the wall helper could not be installed on the host"
    except TimeoutError:
        _log().warning("ssh.command_local_timeout", host=host, timeout=timeout)
        await _stop(conn, proc, marker, host, on_stuck_channel, shortage)
        exit_status, timed_out, refused = None, True, None
    except BaseException:
        await _stop(conn, proc, marker, host, on_stuck_channel, shortage)
        raise
    return CommandResult(
        host=host,
        command=command,
        exit_status=exit_status,
        stdout=stdout.text(),
        stderr=stderr.text(),
        timed_out=timed_out,
        duration_s=time.monotonic() - started,
        stdout_omitted_bytes=stdout.omitted,
        stderr_omitted_bytes=stderr.omitted,
        walled=wall is not None and refused is None,
        unwalled=refused,
    )


def stop_command(marker: str) -> str:
    """POSIX sh that kills every session holding a process with `marker` in its command line
    or environment.

    The pattern is written `[s]cout-run-…` so that it matches the run, not this shell or its
    grep. Sessions 0 and 1 and this shell's own are never killed. Needs /proc, grep and procps
    `pkill -s`, as every Linux host Scout manages has.
    """
    pattern = shlex.quote(f"[{marker[0]}]{marker[1:]}")
    script = (
        'read -r s < /proc/$$/stat; s=${s##*) }; set -- $s; own=$4; sids=""\n'
        f"for f in $(grep -las -e {pattern} /proc/[0-9]*/cmdline /proc/[0-9]*/environ); do\n"
        '  { read -r s < "${f%/*}/stat"; } 2>/dev/null || continue\n'
        "  s=${s##*) }; set -- $s\n"
        '  [ "$4" -gt 1 ] && [ "$4" != "$own" ] && sids="$sids,$4"\n'
        "done\n"
        '[ -z "$sids" ] || pkill -KILL -s "${sids#,}"'
    )
    return f"sh -c {shlex.quote(script)}"


async def _stop(
    conn: asyncssh.SSHClientConnection,
    proc: asyncssh.SSHClientProcess[bytes],
    marker: str,
    host: str,
    on_stuck_channel: Callable[[], None] | None,
    shortage: SessionShortage | None,
) -> None:
    """Best effort: kill the run's whole session on the host, then close the channel."""
    import asyncio

    import asyncssh

    try:
        await _kill_by_marker(conn, marker, host, shortage)
    except (OSError, asyncssh.Error, TimeoutError) as exc:
        _log().warning("ssh.remote_kill_failed", host=host, error=str(exc))
    proc.close()
    try:
        await asyncio.wait_for(proc.wait_closed(), CLEANUP_WAIT_S)
    except TimeoutError:
        _log().warning("ssh.channel_stuck", host=host)
        if on_stuck_channel is not None:
            on_stuck_channel()


async def _kill_by_marker(
    conn: asyncssh.SSHClientConnection, marker: str, host: str, shortage: SessionShortage | None
) -> None:
    """stop_command on a session of its own: the run still holds its session, so on a host
    that allows few per connection this one may be refused. Where the `shortage` hook frees
    one, it is tried again (as _open_session does); where none can be freed (the run holds
    the only one), it runs on a connection of its own."""
    import asyncio

    import asyncssh

    def kill() -> Awaitable[asyncssh.SSHCompletedProcess]:
        return asyncio.wait_for(
            conn.run(stop_command(marker), stdin=asyncssh.DEVNULL), CLEANUP_WAIT_S
        )

    try:
        await kill()
    except asyncssh.ChannelOpenError as exc:
        if exc.code != asyncssh.OPEN_CONNECT_FAILED or shortage is None:
            raise
        if await shortage.free_one():
            await retried_open(kill, host)
        else:
            await shortage.run_elsewhere(stop_command(marker))
