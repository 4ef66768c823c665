"""The tool server of one simulated host: the process every other process of the host comes from.

Starting a Python interpreter and importing the fake tools cost ~65 ms of CPU per command, about
2 CPU-seconds per probe pack; the server pays that once. It waits on a Unix socket
(HOST_DIR/run/tools.sock, see wire.py) and on the brokers of the commands it launched. A report
tool (one that only reads the state and prints, inline.py) it runs itself and hands the output
over; for any other request it forks a child (children.py) that either runs a fake tool with the
client's stdin/stdout/stderr, argv, cwd and environment, exactly as a fresh process would (its
own process group; it may fork detached engine work, sleep, stream for minutes), or becomes a
command of the host (an SSH command: its own session, walled in by confinement.py, then
sandbox/launch). The server reports the exit status. A fork costs ~5 ms of CPU (page tables,
then copy-on-write faults), a report answered in-process well under one.

One process per host, and the host's whole process tree: the server confines itself to the
host's wall at start (confinement.confine_host) and is the "child subreaper" of its tree
(prctl PR_SET_CHILD_SUBREAPER), so whatever a command leaves running (a job, an engine,
`sleep &`) stays below it, is reaped by it and dies with it. Its own environment names its host
(SCOUT_SIM_HOST_DIR), as does every tool child's, which is how `docker stop`, `kill` and `pkill`
recognise this host's processes (procs.belongs_to). Each tool child also takes its client's
command line as its own (/proc/PID/cmdline) and the tool's name (comm), so `pkill` matches what
it matched when every tool was its own process.

The loop is single-threaded (selectors), so forking is safe. It ends on SIGTERM, or when the
simulator process it watches is gone; everything still running below it is killed then.
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
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from . import procs
from .children import Title, run_command_child, run_tool_child, run_writer_child
from .confinement import ConfineError, confine_host
from .inline import deliver, run_report
from .wire import (
    HEADER_BYTES,
    LAUNCH,
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
PR_SET_CHILD_SUBREAPER = 36
KILL_ALL_WAIT_S = 5.0


class _Stop(Exception):
    """SIGTERM reached the server, or the simulator it serves is gone."""


@dataclass
class _Request:
    """One client connection: the request being read, then the child running it."""

    conn: socket.socket
    peer_pid: int
    may_launch: bool  # came in on the server's socket, not through a confined command's broker
    data: bytearray = field(default_factory=bytearray)
    fds: list[int] = field(default_factory=list)
    child: int = 0
    command: bool = False  # the child is a command of the host (a session), not a tool


def _cmdline_of(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read()
    except OSError:
        return b""


def _received_fds(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if (level, kind) == (socket.SOL_SOCKET, socket.SCM_RIGHTS):
            usable = len(payload) - len(payload) % _FD_BYTES
            fds += struct.unpack(f"{usable // _FD_BYTES}i", payload[:usable])
    return fds


def _peer_pid(conn: socket.socket) -> int:
    pid, _uid, _gid = _UCRED.unpack(
        conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    )
    return int(pid)


class ToolServer:
    """Serves the fake tools and the commands of one host on `listener` until stopped."""

    def __init__(self, listener: socket.socket, host_dir: str, watch_pid: int) -> None:
        self._listener = listener
        self._host_dir = host_dir
        self._watch_pid = watch_pid
        self._title = Title()
        self._selector = selectors.DefaultSelector()
        self._requests: dict[int, _Request] = {}  # by child pid once running

    def serve(self) -> None:
        self._title.set(f"scout-sim tool server {self._host_dir}".encode())
        self._wall_in()
        ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        gc.freeze()  # children never collect what the server holds: fewer copy-on-write faults
        wake_r, wake_w = socket.socketpair()
        wake_w.setblocking(False)
        wake_r.setblocking(False)
        signal.set_wakeup_fd(wake_w.fileno())  # SIGTERM and SIGCHLD wake the loop
        signal.signal(signal.SIGTERM, lambda *_: None)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self._selector.register(wake_r, selectors.EVENT_READ, partial(self._woken, wake_r))
        self._listener.setblocking(False)
        self._selector.register(self._listener, selectors.EVENT_READ, self._accept)
        watched = os.pidfd_open(self._watch_pid)
        self._selector.register(watched, selectors.EVENT_READ, self._stop)
        try:
            while True:
                for key, _events in self._selector.select():
                    self._handle(key.data)
        except _Stop:
            pass
        finally:
            self._kill_all()

    def _handle(self, handler: Callable[[], None]) -> None:
        """Run one event's handler; a bug in one request must not take the host down."""
        try:
            handler()
        except _Stop:
            raise
        except Exception:
            print("tool server: an event failed; serving on", file=sys.stderr)
            traceback.print_exc()

    def _wall_in(self) -> None:
        try:
            abi = confine_host(os.path.dirname(self._host_dir))
        except ConfineError as exc:
            print(f"tool server: runs without the host's wall: {exc}", file=sys.stderr)
            return
        print(f"tool server: confined to the hosts folder (Landlock ABI {abi})", file=sys.stderr)

    def _stop(self) -> None:
        raise _Stop

    def _woken(self, wake: socket.socket) -> None:
        with contextlib.suppress(BlockingIOError):
            signals = wake.recv(256)
            if signal.SIGTERM in signals:
                raise _Stop
        self._reap()

    def _reap(self) -> None:
        """Collect every ended child: requests get their answer, orphans are just reaped."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            request = self._requests.pop(pid, None)
            if request is not None:
                self._ended(request, status)

    def _accept(self) -> None:
        try:
            conn, _addr = self._listener.accept()
        except BlockingIOError:
            return
        self._take(conn, may_launch=True)

    def _take(self, conn: socket.socket, may_launch: bool) -> None:
        request = _Request(conn, _peer_pid(conn), may_launch)
        conn.setblocking(False)
        self._selector.register(conn, selectors.EVENT_READ, partial(self._read, request))

    def _brokered(self, broker: socket.socket) -> None:
        """A client of a confined command handed in one end of its socketpair."""
        try:
            data, ancillary, _flags, _addr = broker.recvmsg(16, socket.CMSG_SPACE(_FD_BYTES))
        except BlockingIOError:
            return
        except OSError:
            data, ancillary = b"", []
        fds = _received_fds(ancillary)
        for fd in fds[1:]:
            os.close(fd)
        if fds:
            try:
                conn = socket.socket(fileno=fds[0])
            except OSError:
                os.close(fds[0])
                return
            if conn.family == socket.AF_UNIX and conn.type == socket.SOCK_STREAM:
                self._take(conn, may_launch=False)
            else:
                conn.close()
        elif not data:  # every process of that command tree has closed it
            self._selector.unregister(broker)
            broker.close()

    def _read(self, request: _Request) -> None:
        if request.conn.fileno() == -1:  # answered and closed earlier in this same round
            return
        if request.child:
            self._client_spoke(request)
            return
        try:
            data, ancillary, _flags, _addr = request.conn.recvmsg(65536, _ANCILLARY)
        except BlockingIOError:
            return
        except OSError:
            data, ancillary = b"", []
        request.fds += _received_fds(ancillary)
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
            if parsed[0] == LAUNCH and not request.may_launch:
                raise WireError("a command may not launch commands through its broker")
        except (WireError, ValueError) as exc:
            print(
                f"tool server: refused a request from pid {request.peer_pid}: {exc}",
                file=sys.stderr,
            )
            with contextlib.suppress(OSError):
                request.conn.send(exit_reply(BAD_REQUEST_STATUS << 8))
            self._drop(request)
            return
        self._start(request, parsed)

    def _start(
        self, request: _Request, parsed: tuple[str, bytes, bytes, list[bytes], list[bytes]]
    ) -> None:
        tool, _cwd, streams, args, _env = parsed
        if tool == LAUNCH:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            pid = os.fork()
            if pid == 0:
                run_command_child(self._host_dir, streams, request.fds, theirs.fileno(), args)
            theirs.close()
            ours.setblocking(False)
            self._selector.register(ours, selectors.EVENT_READ, partial(self._brokered, ours))
            request.command = True
        elif self._answered_here(request, parsed):
            return
        else:
            title = _cmdline_of(request.peer_pid)
            pid = os.fork()
            if pid == 0:
                run_tool_child(
                    self._host_dir, self._title, parsed, request.fds, request.peer_pid, title
                )
            with contextlib.suppress(OSError):
                os.setpgid(pid, pid)
        self._track(request, pid)

    def _track(self, request: _Request, pid: int) -> None:
        """The child `pid` now holds the client's streams; its end will be the answer."""
        for fd in request.fds:
            os.close(fd)
        request.fds, request.child = [], pid
        self._requests[pid] = request

    def _answered_here(
        self, request: _Request, parsed: tuple[str, bytes, bytes, list[bytes], list[bytes]]
    ) -> bool:
        """A report tool runs in the server itself (inline.py); True once the client has its
        output and exit status. Output that could block the loop goes out through a child."""
        tool, cwd, streams, args, env = parsed
        ran = run_report(self._host_dir, tool, cwd, args, env)
        if ran is None:
            return False
        code, chunks = ran
        fds = dict(zip((int(chr(c)) for c in streams), request.fds, strict=False))
        written = deliver(chunks, fds)
        if written is None:
            pid = os.fork()
            if pid == 0:
                run_writer_child(streams, request.fds, chunks, code)
            self._track(request, pid)
            return True
        for fd in request.fds:
            os.close(fd)
        request.fds = []
        self._ended(request, ((written or code) & 0xFF) << 8)
        return True

    def _client_spoke(self, request: _Request) -> None:
        """A signal to pass on, or the client's end closing: it was killed, so its child is."""
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
        """Signal the child's process group; a KILL to a command ends its whole session."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(request.child, sig)
        if request.command and sig == signal.SIGKILL:
            self._end_session(request.child)

    def _end_session(self, sid: int) -> None:
        for pid in procs.session_members(sid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def _ended(self, request: _Request, status: int) -> None:
        if request.command:  # what it left in its session goes with it (detached work has its own)
            self._end_session(request.child)
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
        """Everything below the server: requests, commands, jobs, engines, orphans. Killed
        children reparent to the server (a subreaper), which reaps them all before it goes."""
        deadline = time.monotonic() + KILL_ALL_WAIT_S
        while (below := procs.descendants(os.getpid())) and time.monotonic() < deadline:
            for pid in below:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
            with contextlib.suppress(ChildProcessError):
                while os.waitpid(-1, os.WNOHANG)[0]:
                    pass


def serve(argv: list[str]) -> None:
    """Entry point: `serve([HOST_DIR, LISTEN_FD, WATCH_PID, ...room for titles])`."""
    host_dir, listen_fd, watch_pid = argv[0], int(argv[1]), int(argv[2])
    listener = socket.socket(fileno=listen_fd)
    ToolServer(listener, host_dir, watch_pid).serve()
