"""Walled calls on a connection's warm wall helper: a fork per call, not an interpreter start.

Starting python3 on the host was 70-85 % of what a walled call cost, and most of it under load
(tools/wall/host_server.py). So a connection that runs walled calls keeps one channel open to
the helper's fork-server, and a walled call is a RUN frame on it: the server forks a keeper
that builds the same wall as a per-call helper would and runs the command; its output, exit
status and time limit come back framed and read as a per-call helper's would (CommandResult,
the output capped, exit 124 at the limit). A call not answered within its time and a grace
is told to the server (KILL) and ended on the host by its marker, as a per-call run is.

Fail closed: where the server cannot start (the pool then runs the call through the per-call
helper, which refuses the same way where the wall cannot be built), or its channel ends while
calls run (they end with a ConnectionError: the pool says the call may or may not have run
and reconnects), no call runs without the wall. Calls through `sudo -n` need a helper that
starts as root and go on using the per-call helper.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import asyncssh
import structlog

from tools.ssh.remote_command import (
    LOCAL_GRACE_S,
    OUTPUT_CAP_BYTES,
    TIMEOUT_EXIT_CODES,
    CappedBuffer,
    CommandResult,
    retried_open,
    shell_script,
    stop_command,
)
from tools.wall.command import MISSING_MARK, WallSpec, server_line, spec_text, unwalled_reason
from tools.wall.host_server import ERR, EXIT, HEADER, IN, KILL, OPEN, OUT, READY_LINE, RUN

log = structlog.get_logger()
START_TIMEOUT_S = 30.0
CLEANUP_WAIT_S = 3.0


@dataclass
class _Call:
    stdout: CappedBuffer
    stderr: CappedBuffer
    exit: asyncio.Future[int] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    # a resident call's stdout goes here, as it comes, instead of into `stdout`
    on_out: Callable[[bytes], None] | None = None


class ResidentCall:
    """A walled command that stays running and answers requests on its stdin (OPEN): one
    request at a time, each answered by output that ends with what the caller names."""

    def __init__(self, server: WallServer, number: int, call: _Call, marker: str) -> None:
        self._server, self._number, self._call, self._marker = server, number, call, marker
        self._pending = bytearray()
        self._more = asyncio.Event()
        self._turn = asyncio.Lock()
        self._closed = False
        call.on_out = self._out
        call.exit.add_done_callback(self._ended)

    @property
    def ended(self) -> bool:
        return self._closed or self._call.exit.done() or self._server.ended

    def said(self) -> str:
        """What it printed that no request took (its refusal, when it ended at once)."""
        return self._pending.decode("utf-8", "replace")

    def _ended(self, exit: asyncio.Future[int]) -> None:
        if not exit.cancelled():
            exit.exception()  # a lost channel's error is read here: the next ask says so
        self._more.set()

    def _out(self, data: bytes) -> None:
        self._pending += data
        self._more.set()

    async def read_until(self, end: bytes, timeout: float) -> bytes:
        """Its output up to and including `end` (a ConnectionError when it ends first; a
        TimeoutError after `timeout` seconds)."""
        async with asyncio.timeout(timeout):
            while (found := self._pending.find(end)) < 0:
                if self._call.exit.done():
                    raise ConnectionError("the resident call ended")
                self._more.clear()
                await self._more.wait()
        answer = bytes(self._pending[: found + len(end)])
        del self._pending[: found + len(end)]
        return answer

    async def ask(self, request: bytes, end: bytes, timeout: float) -> bytes:
        """Send `request`; its answer, up to and including `end`. Ended at the host when it
        does not come in time (the call is then of no further use)."""
        async with self._turn:
            if self.ended:
                raise ConnectionError("the resident call ended")
            del self._pending[:]  # what an abandoned request left (its answer says its token)
            self._server._send(self._number, IN, request)
            try:
                return await self.read_until(end, timeout)
            except TimeoutError:
                await self.close()
                raise
            except asyncio.CancelledError:  # a cancelled poll leaves nothing running
                self._abandon()
                raise

    def _abandon(self) -> None:
        """End it on the host without waiting (KILL only: no awaiting while cancelled)."""
        self._closed = True
        if not self._call.exit.done():
            try:
                self._server._send(self._number, KILL, b"")
            except ConnectionError:
                return

    async def close(self) -> None:
        """End it on the host (its keeper kills it, as at a time limit)."""
        self._closed = True
        if not self._call.exit.done():
            await self._server._end(self._number, self._marker)


class WallServer:
    """The fork-server on one connection, and the calls it is running."""

    def __init__(
        self, conn: asyncssh.SSHClientConnection, process: asyncssh.SSHClientProcess[bytes]
    ) -> None:
        self._conn = conn
        self._process = process
        self._calls: dict[int, _Call] = {}
        self._numbers = itertools.count(1)
        self.ended = False
        # resident calls its users keep here by purpose (starting or started; None: refused),
        # so that they go with the server and its connection
        self.residents: dict[str, asyncio.Future[ResidentCall | None]] = {}
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, conn: asyncssh.SSHClientConnection, host: str) -> WallServer | str:
        """The server, running; or why it could not start (the helper's own refusal, or what
        the channel printed). Each pass's open is retried while sshd refuses it: on a host
        allowing one session, the first pass's may not be free yet when the install pass opens."""
        for install in (False, True):
            line = server_line(install=install)
            opening = functools.partial(conn.create_process, line, encoding=None)
            process = await retried_open(opening, host)
            try:
                first = await asyncio.wait_for(process.stdout.readline(), START_TIMEOUT_S)
            except TimeoutError:
                first = b""
            if first == READY_LINE:
                return cls(conn, process)
            process.close()
            with contextlib.suppress(TimeoutError):  # a host allowing one session needs it back
                await asyncio.wait_for(process.wait_closed(), CLEANUP_WAIT_S)
            said = first.decode("utf-8", "replace")
            if not (said.startswith(MISSING_MARK) and not install):
                return unwalled_reason(199, said) or said.strip() or "the wall server did not start"
        raise AssertionError("unreachable: the install pass returns")

    async def run(
        self,
        host: str,
        command: str,
        *,
        timeout: float,
        cwd: str | None,
        env: Mapping[str, str] | None,
        wall: WallSpec,
        marker: str,
        output_cap: int = OUTPUT_CAP_BYTES,
    ) -> CommandResult:
        """Run `command` under `sh -c` inside the wall, as remote_command.run_remote would."""
        script = shell_script(command, cwd=cwd, env=env, marker=marker)
        words = [spec_text(wall, timeout), "sh", "-c", script]
        payload = b"\0".join(word.encode("utf-8", "surrogateescape") for word in words)
        number = next(self._numbers)
        call = _Call(CappedBuffer(output_cap), CappedBuffer(output_cap))
        self._calls[number] = call
        started = time.monotonic()
        try:
            self._send(number, RUN, payload)
            exit_status: int | None = await asyncio.wait_for(
                asyncio.shield(call.exit), timeout + LOCAL_GRACE_S
            )
        except TimeoutError:
            log.warning("ssh.command_local_timeout", host=host, timeout=timeout, walled=True)
            await self._end(number, marker)
            exit_status = None
        except BaseException:
            await self._end(number, marker)
            raise
        finally:
            self._calls.pop(number, None)
        duration = time.monotonic() - started
        stdout = call.stdout.text()
        refused = unwalled_reason(exit_status, stdout)
        return CommandResult(
            host=host,
            command=command,
            exit_status=exit_status,
            stdout=stdout,
            stderr=call.stderr.text(),
            timed_out=exit_status is None
            or (exit_status in TIMEOUT_EXIT_CODES and duration >= timeout),
            duration_s=duration,
            stdout_omitted_bytes=call.stdout.omitted,
            stderr_omitted_bytes=call.stderr.omitted,
            walled=refused is None,
            unwalled=refused,
        )

    def open(self, command: str, *, wall: WallSpec, marker: str) -> ResidentCall:
        """Start `command` under `sh -c` inside the wall, with no time limit and its stdin
        open to the caller: a resident call (host_server.py OPEN)."""
        script = shell_script(command, cwd=None, env=None, marker=marker)
        words = [spec_text(wall, 0), "sh", "-c", script]
        payload = b"\0".join(word.encode("utf-8", "surrogateescape") for word in words)
        number = next(self._numbers)
        call = _Call(CappedBuffer(OUTPUT_CAP_BYTES), CappedBuffer(OUTPUT_CAP_BYTES))
        self._calls[number] = call
        resident = ResidentCall(self, number, call, marker)
        call.exit.add_done_callback(lambda _: self._calls.pop(number, None))
        self._send(number, OPEN, payload)
        return resident

    def close(self) -> None:
        """End the server's channel: the server then ends every call still running."""
        self._process.close()

    async def stop(self) -> None:
        """End the server once the calls running on it have ended, and return when its channel
        has closed: its session on the host is free then (for a host whose sshd allows few
        sessions per connection; the caller has already stopped sending calls here). Each call
        ends by its own time limit, so this wait is bounded by theirs; a resident call (a job
        reader) has none and would never end: it ends with the server, its users then read
        another way."""
        running = [
            call.exit
            for call in self._calls.values()
            if not call.exit.done() and call.on_out is None
        ]
        if running:
            await asyncio.wait(running)
        self.close()
        try:
            await asyncio.wait_for(self._process.wait_closed(), CLEANUP_WAIT_S)
        except TimeoutError:
            log.warning("ssh.wall_server_stop_slow")

    def _send(self, number: int, kind: int, payload: bytes) -> None:
        if self.ended:
            raise ConnectionError("the wall helper's channel has closed")
        self._process.stdin.write(HEADER.pack(number, kind, len(payload)) + payload)

    async def _end(self, number: int, marker: str) -> None:
        """Best effort: the keeper ends the command (KILL), and its session is killed by the
        run's marker as a per-call run's is. An ended server has ended its keepers already
        (each gets SIGTERM when it dies)."""
        if self.ended:
            return
        try:
            self._send(number, KILL, b"")
            await asyncio.wait_for(
                self._conn.run(stop_command(marker), stdin=asyncssh.DEVNULL), CLEANUP_WAIT_S
            )
        except (OSError, asyncssh.Error, TimeoutError) as exc:
            log.warning("ssh.remote_kill_failed", error=str(exc), walled=True)

    async def _read(self) -> None:
        """Hand each frame to its call; when the channel ends, so does every call on it."""
        stream = self._process.stdout
        try:
            while True:
                number, kind, length = HEADER.unpack(await stream.readexactly(HEADER.size))
                data = await stream.readexactly(length) if length else b""
                call = self._calls.get(number)
                if call is None or call.exit.done():
                    continue
                if kind == OUT and call.on_out is not None:
                    call.on_out(data)
                elif kind == OUT:
                    call.stdout.add(data)
                elif kind == ERR:
                    call.stderr.add(data)
                elif kind == EXIT:
                    call.exit.set_result(int(data))
        except (asyncio.IncompleteReadError, asyncssh.Error, OSError) as exc:
            running = [  # a resident call (a reader) is idle between its requests
                call
                for call in self._calls.values()
                if not call.exit.done() and call.on_out is None
            ]
            if running:  # an ended connection closes an idle server: news only with calls on it
                log.warning("ssh.wall_server_ended", calls=len(running), error=str(exc))
        finally:
            self.ended = True
            for call in self._calls.values():
                if not call.exit.done():
                    call.exit.set_exception(ConnectionError("the wall helper's channel closed"))
