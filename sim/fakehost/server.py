"""The tool server of one simulated host: one long-lived process that runs every fake command.

Starting a Python interpreter and importing the fake tools cost ~65 ms of CPU per command, about
2 CPU-seconds per probe pack; the server pays that once. It waits on a Unix socket
(HOST_DIR/run/tools.sock, see wire.py); for each request it forks a child that takes over the
client's stdin/stdout/stderr, argv, cwd and environment, runs the tool exactly as a fresh process
would (its own process group; it may fork detached engine work, sleep, stream for minutes) and
exits; the server reports the exit status. Forking an interpreter that has everything imported
costs well under a millisecond.

One process per host, not per cluster: the server's own environment names its host
(SCOUT_SIM_HOST_DIR), and so does every process forked from it, which is how `docker stop`
and `pkill` recognise this host's processes (procs.belongs_to). Each child also takes its
client's command line as its own (/proc/PID/cmdline) and the tool's name (/proc/PID/comm), so
`pkill -f` matches what it matched when every tool was its own process.

The loop is single-threaded (selectors + pidfds), so forking is safe. It ends on SIGTERM, or
when the simulator process it watches is gone; running tools are killed then.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import selectors
import signal
import socket
import struct
import sys
import traceback
from dataclasses import dataclass, field
from functools import partial

from . import procs
from .main import main as run_tool
from .wire import (
    HEADER_BYTES,
    STD_STREAMS,
    WireError,
    decode_request,
    exit_reply,
    request_length,
)

_FD_BYTES = struct.calcsize("i")
_ANCILLARY = socket.CMSG_SPACE(len(STD_STREAMS) * _FD_BYTES)
_UCRED = struct.Struct("3i")
BAD_REQUEST_STATUS = 126  # what a shell reports for a command it could not run


class _Stop(Exception):
    """SIGTERM reached the server, or the simulator it serves is gone."""


@dataclass
class _Request:
    """One client connection: the request being read, then the tool child running it."""

    conn: socket.socket
    peer_pid: int
    data: bytearray = field(default_factory=bytearray)
    fds: list[int] = field(default_factory=list)
    child: int = 0
    pidfd: int = -1


class _Title:
    """Rewrites this process's /proc/PID/cmdline in place, like setproctitle does on Linux."""

    def __init__(self) -> None:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        self.start, self.end = int(fields[45]), int(fields[46])  # arg_start, arg_end

    def set(self, cmdline: bytes) -> None:
        room = self.end - self.start
        data = cmdline[: room - 1].ljust(room, b"\0")
        ctypes.memmove(self.start, data, room)


def _set_comm(name: str) -> None:
    with contextlib.suppress(OSError), open("/proc/self/comm", "w") as comm:
        comm.write(name[:15])


def _cmdline_of(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read()
    except OSError:
        return b""


class ToolServer:
    """Serves the fake tools of one host on `listener` until stopped."""

    def __init__(self, listener: socket.socket, host_dir: str, watch_pid: int) -> None:
        self._listener = listener
        self._host_dir = host_dir
        self._watch_pid = watch_pid
        self._title = _Title()
        self._selector = selectors.DefaultSelector()
        self._requests: dict[int, _Request] = {}  # by child pid once running

    def serve(self) -> None:
        self._title.set(f"scout-sim tool server {self._host_dir}".encode())
        gc.freeze()  # children never collect what the server holds: fewer copy-on-write faults
        wake_r, wake_w = socket.socketpair()
        wake_w.setblocking(False)
        signal.set_wakeup_fd(wake_w.fileno())  # SIGTERM wakes the loop, between two requests
        signal.signal(signal.SIGTERM, lambda *_: None)
        self._selector.register(wake_r, selectors.EVENT_READ, self._stop)
        self._listener.setblocking(False)
        self._selector.register(self._listener, selectors.EVENT_READ, self._accept)
        watched = os.pidfd_open(self._watch_pid)
        self._selector.register(watched, selectors.EVENT_READ, self._stop)
        try:
            while True:
                for key, _events in self._selector.select():
                    key.data()
        except _Stop:
            pass
        finally:
            self._kill_all()

    def _stop(self) -> None:
        raise _Stop

    def _accept(self) -> None:
        try:
            conn, _addr = self._listener.accept()
        except BlockingIOError:
            return
        pid, _uid, _gid = _UCRED.unpack(
            conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
        )
        request = _Request(conn, pid)
        conn.setblocking(False)
        self._selector.register(conn, selectors.EVENT_READ, partial(self._read, request))

    def _read(self, request: _Request) -> None:
        if request.child:
            self._client_spoke(request)
            return
        try:
            data, ancillary, _flags, _addr = request.conn.recvmsg(65536, _ANCILLARY)
        except BlockingIOError:
            return
        except OSError:
            data, ancillary = b"", []
        for level, kind, payload in ancillary:
            if (level, kind) == (socket.SOL_SOCKET, socket.SCM_RIGHTS):
                usable = len(payload) - len(payload) % _FD_BYTES
                request.fds += list(struct.unpack(f"{usable // _FD_BYTES}i", payload[:usable]))
        if not data:
            self._drop(request)
            return
        request.data += data
        if len(request.data) < HEADER_BYTES:
            return
        try:
            length = request_length(request.data)
            if len(request.data) < HEADER_BYTES + length:
                return
            parsed = decode_request(bytes(request.data[HEADER_BYTES : HEADER_BYTES + length]))
        except (WireError, ValueError) as exc:
            print(
                f"tool server: refused a request from pid {request.peer_pid}: {exc}",
                file=sys.stderr,
            )
            with contextlib.suppress(OSError):
                request.conn.send(exit_reply(BAD_REQUEST_STATUS << 8))
            self._drop(request)
            return
        self._start(request, *parsed)

    def _start(
        self,
        request: _Request,
        tool: str,
        cwd: bytes,
        streams: bytes,
        args: list[bytes],
        env: list[bytes],
    ) -> None:
        title = _cmdline_of(request.peer_pid)
        pid = os.fork()
        if pid == 0:
            self._run_child(request, tool, cwd, streams, args, env, title)
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)
        for fd in request.fds:
            os.close(fd)
        request.fds, request.child = [], pid
        request.pidfd = os.pidfd_open(pid)
        self._requests[pid] = request
        self._selector.register(request.pidfd, selectors.EVENT_READ, partial(self._ended, request))

    def _client_spoke(self, request: _Request) -> None:
        """A signal to pass on, or the client's end closing: it was killed, so the tool is too."""
        try:
            data = request.conn.recv(256)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._signal(request, signal.SIGKILL)
            self._selector.unregister(request.conn)
            request.conn.close()
            return
        for line in data.split(b"\n"):
            if line.startswith(b"k") and line[1:].isdigit():
                self._signal(request, int(line[1:]))

    def _signal(self, request: _Request, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(request.child, sig)

    def _ended(self, request: _Request) -> None:
        _pid, status = os.waitpid(request.child, 0)
        self._selector.unregister(request.pidfd)
        os.close(request.pidfd)
        del self._requests[request.child]
        if request.conn.fileno() != -1:
            with contextlib.suppress(OSError):
                request.conn.send(exit_reply(status))
            self._selector.unregister(request.conn)
            request.conn.close()

    def _drop(self, request: _Request) -> None:
        for fd in request.fds:
            os.close(fd)
        self._selector.unregister(request.conn)
        request.conn.close()

    def _kill_all(self) -> None:
        for pid in list(self._requests):
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)

    def _run_child(
        self,
        request: _Request,
        tool: str,
        cwd: bytes,
        streams: bytes,
        args: list[bytes],
        env: list[bytes],
        title: bytes,
    ) -> None:
        """In the forked child: become the tool's process, run it, exit with its status."""
        code = 1
        gc.disable()  # a short-lived child: its garbage goes with it
        try:
            os.setpgid(0, 0)
            passed = [int(chr(c)) for c in streams]
            for target in STD_STREAMS:
                if target in passed:
                    os.dup2(request.fds[passed.index(target)], target)
                else:
                    os.close(target)
            os.closerange(3, os.sysconf("SC_OPEN_MAX"))
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            os.environb.clear()
            os.environb.update(item.partition(b"=")[::2] for item in env if b"=" in item)
            with contextlib.suppress(OSError):
                os.chdir(cwd)
            self._title.set(title or tool.encode())
            _set_comm(tool)
            procs.spare(request.peer_pid)
            sys.argv = [tool, *(os.fsdecode(a) for a in args)]
            code = run_tool(tool, self._host_dir)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        except BaseException:
            with contextlib.suppress(Exception):
                traceback.print_exc()
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os._exit(code)


def serve(argv: list[str]) -> None:
    """Entry point: `serve([HOST_DIR, LISTEN_FD, WATCH_PID, ...room for titles])`."""
    host_dir, listen_fd, watch_pid = argv[0], int(argv[1]), int(argv[2])
    listener = socket.socket(fileno=listen_fd)
    ToolServer(listener, host_dir, watch_pid).serve()
