"""What one SSH channel of a simulated host does: run a command in the sandbox, or carry bytes.

`CommandSession` is an exec or shell request: a command the host's tool server launches in the
host's sandbox (sim/host_command.py: `HOST_DIR/sandbox/launch` walled in, in its own session),
stdin/stdout/stderr pumped to the channel, signals passed on, and its whole session killed when
the channel or connection goes. `Bridge` joins a forwarded channel to a stream (a
worker's in-process SSH server, or an engine's HTTP port).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
from collections.abc import Callable
from typing import Any

import asyncssh

from sim.cluster_view import ClusterView
from sim.host_command import NOT_RUN_STATUS, HostCommand, HostCommandError


class CommandSession(asyncssh.SSHServerSession):  # type: ignore[type-arg]
    """One exec or shell request, run as a command in the host's sandbox."""

    def __init__(
        self, cluster: ClusterView, host: str, on_close: Callable[[], None] = lambda: None
    ) -> None:
        self._cluster, self._host, self._on_close = cluster, host, on_close
        self._chan: asyncssh.SSHServerChannel[bytes] | None = None
        self._command: str | None = None
        self._proc: HostCommand | None = None
        self._pending: list[bytes] = []
        self._eof = False
        self._task: asyncio.Task[None] | None = None

    def connection_made(self, chan: asyncssh.SSHServerChannel[bytes]) -> None:
        self._chan = chan

    def pty_requested(self, *args: Any) -> bool:
        return True

    def exec_requested(self, command: str) -> bool:
        self._command = command
        return True

    def shell_requested(self) -> bool:
        return True

    def session_started(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        if self._proc:
            self._proc.stdin.write(data)
        else:
            self._pending.append(data)

    def eof_received(self) -> bool:
        self._eof = True
        if self._proc:
            self._proc.stdin.close()
        return True

    def signal_received(self, signal_name: str) -> None:
        self._signal(getattr(signal, f"SIG{signal_name}", signal.SIGTERM))

    def connection_lost(self, exc: Exception | None) -> None:
        self._on_close()
        self._signal(signal.SIGKILL)
        if self._task and not self._task.done():
            self._task.cancel()

    def _signal(self, sig: int) -> None:
        if self._proc:
            self._proc.signal(sig)

    async def _run(self) -> None:
        assert self._chan is not None
        chan, faults = self._chan, self._cluster.faults(self._host)
        if faults.latency_s:
            await asyncio.sleep(faults.latency_s)
        command = self._command or ""
        drop = bool(faults.drop and command and re.search(faults.drop, command))
        try:
            self._proc = proc = await HostCommand.start(
                self._cluster.host_dir(self._host), self._command
            )
        except HostCommandError as exc:
            chan.write_stderr(f"sim: {exc}\n".encode())
            chan.exit(NOT_RUN_STATUS)
            return
        for data in self._pending:
            proc.stdin.write(data)
        if self._eof:
            proc.stdin.close()
        try:
            if drop:
                await proc.stdout.read(1)
                chan.get_connection().abort()
                return
            await asyncio.gather(
                pump(proc.stdout, chan.write), pump(proc.stderr, chan.write_stderr)
            )
            code = await proc.wait()
            if code < 0:
                chan.exit_with_signal(signal.Signals(-code).name.removeprefix("SIG"))
            else:
                chan.exit(code)
        except (ConnectionError, asyncssh.Error):
            return  # the client closed the channel: what the command still prints goes nowhere
        finally:
            proc.close()  # a command still running dies with its session (the server sees to it)


async def pump(reader: asyncio.StreamReader, write: Any) -> None:
    while data := await reader.read(65536):
        write(data)


class Bridge(asyncssh.SSHTCPSession):  # type: ignore[type-arg]
    """Joins a forwarded channel on the head to a socketpair end served by a worker."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer
        self._task: asyncio.Task[None] | None = None

    def connection_made(self, chan: asyncssh.SSHTCPChannel[bytes]) -> None:
        async def copy_out() -> None:
            with contextlib.suppress(ConnectionError, asyncssh.Error):
                await pump(self._reader, chan.write)
                chan.write_eof()

        self._task = asyncio.get_running_loop().create_task(copy_out())

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        self._writer.write(data)

    def eof_received(self) -> bool:
        with contextlib.suppress(OSError):
            self._writer.write_eof()
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        self._writer.close()
        if self._task:
            self._task.cancel()
