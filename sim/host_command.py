"""A command in a simulated host's sandbox, started by the host's tool server, as asyncio streams.

The simulator never starts a sandbox command itself: it hands three pipes to the host's tool
server with a LAUNCH request (sim/fakehost/wire.py), and the server forks the command below
itself, walled in (sim/fakehost/confinement.py), in a session of its own. What the simulator
keeps is the pipes' other ends and the request's connection, which carries signals one way and
the exit status the other; closing it (the SSH channel went) kills the command's whole session.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from pathlib import Path

from sim.fakehost.wire import LAUNCH, SOCKET_DIR, SOCKET_NAME, encode_request

# What a shell reports for a command it could not run; the channel's exit when the server is gone.
NOT_RUN_STATUS = 126


class HostCommandError(Exception):
    """The host's tool server could not be asked to run the command (it is not running)."""


def _connect(host_dir: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dir_fd = os.open(host_dir / SOCKET_DIR, os.O_RDONLY | os.O_DIRECTORY)
    try:
        sock.connect(f"/proc/self/fd/{dir_fd}/{SOCKET_NAME}")  # short whatever host_dir is
    except OSError:
        sock.close()
        raise
    finally:
        os.close(dir_fd)
    return sock


class HostCommand:
    """One running command: `stdin`, `stdout`, `stderr`, `signal()`, `wait()`, `close()`."""

    def __init__(
        self,
        stdin: asyncio.WriteTransport,
        stdout: asyncio.StreamReader,
        stderr: asyncio.StreamReader,
        control: tuple[asyncio.StreamReader, asyncio.StreamWriter],
        transports: list[asyncio.BaseTransport],
    ) -> None:
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self._answers, self._control = control
        self._transports = transports
        self.returncode: int | None = None

    @classmethod
    async def start(cls, host_dir: Path, command: str | None) -> HostCommand:
        """Launch `command` (None: a shell reading its script from stdin) on the host."""
        try:
            sock = _connect(host_dir)
        except OSError as exc:
            raise HostCommandError(
                f"the tool server of {host_dir.name} is not running ({exc.strerror})"
            ) from exc
        pipes = [os.pipe() for _stream in range(3)]
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1]]
        try:
            args = [] if command is None else [os.fsencode(command)]
            request = encode_request(LAUNCH, b"", b"012", args, [])
            fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in theirs)
            sock.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
        except OSError as exc:
            sock.close()
            for read_end, write_end in pipes:
                os.close(read_end)
                os.close(write_end)
            raise HostCommandError(f"the tool server of {host_dir.name} refused: {exc}") from exc
        finally:
            for fd in theirs:
                with contextlib.suppress(OSError):
                    os.close(fd)
        loop = asyncio.get_running_loop()
        transports: list[asyncio.BaseTransport] = []
        readers = []
        for read_end in (pipes[1][0], pipes[2][0]):
            reader = asyncio.StreamReader()
            transport, _protocol = await loop.connect_read_pipe(
                lambda reader=reader: asyncio.StreamReaderProtocol(reader),
                os.fdopen(read_end, "rb", 0),
            )
            transports.append(transport)
            readers.append(reader)
        stdin, _protocol = await loop.connect_write_pipe(
            asyncio.Protocol, os.fdopen(pipes[0][1], "wb", 0)
        )
        transports.append(stdin)
        control = await asyncio.open_unix_connection(sock=sock)
        return cls(stdin, readers[0], readers[1], control, transports)

    def signal(self, sig: int) -> None:
        """Pass a signal to the command (its process group; KILL ends its whole session)."""
        if self.returncode is None and not self._control.is_closing():
            self._control.write(b"k%d\n" % sig)

    async def wait(self) -> int:
        """The exit status as asyncio subprocesses give it: negative for a signal."""
        if self.returncode is None:
            try:
                answer = (await self._answers.readline()).strip()
            except OSError:  # the server closed on a signal we sent as the command ended
                answer = b""
            if answer.startswith(b"s"):
                self.returncode = -int(answer[1:])
            elif answer.startswith(b"x"):
                self.returncode = int(answer[1:])
            else:
                self.returncode = NOT_RUN_STATUS
        return self.returncode

    def close(self) -> None:
        """Let go of the command; if it still runs, the server kills its session."""
        self._control.close()
        for transport in self._transports:
            transport.close()
