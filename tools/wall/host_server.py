"""The wall's fork-server, on the host: one warm helper per SSH connection, a fork per call.

A walled call used to start python3 on the host (`host_helper.py run`): the interpreter's
start and ctypes' load were most of what the wall cost, and on a loaded host (two cores
shared with a CI run) that start took 50-80 ms. Here the helper starts once, on a channel of
its own (`host_helper.py serve`), and each call is a fork of it: the forked child (the call's
keeper) runs exactly what `run` runs, in a session of its own, with its stdout and stderr on
pipes that the server frames back onto the channel. So the wall a call gets is the one `run`
builds, part for part; only the interpreter's start is gone.

Frames, both ways: a header `!IBI` (call number, kind, payload length), then the payload.
To the server: RUN (payload: SPEC NUL PROGRAM NUL ARG...), KILL (empty: the call's keeper
gets SIGTERM, on which it kills the command, as at its time limit), OPEN (as RUN, but the
command's stdin is a pipe from the caller instead of /dev/null: a resident call, such as the
job status reader of host_job_reader.py, that answers requests) and IN (bytes for an open
call's stdin; empty: its end). From the server: OUT and
ERR (a chunk of the command's output) and EXIT (the keeper's exit status, in ASCII), sent
when the keeper has ended and both pipes closed. The server's first bytes are READY_LINE.

When its channel closes (stdin ends, or stdout breaks) the server ends every running call's
keeper (SIGTERM) and exits; a keeper whose server died gets SIGTERM from the kernel
(PR_SET_PDEATHSIG). Nothing a call started outlives its keeper (host_helper.py), so nothing
outlives the server.

Standard library only, Python 3.8+: it runs on the host (tools/wall/command.py ships it).
"""

from __future__ import annotations

import _signal  # the C module: `signal` would import enum, and every fork would copy it
import ctypes
import os
import select
import struct
import sys
from collections.abc import Callable

HEADER = struct.Struct("!IBI")
RUN, KILL, OPEN, IN = 1, 2, 3, 4  # to the server
OUT, ERR, EXIT = 1, 2, 3  # from the server
READY_LINE = b"@@scout-wall serving\n"
PR_SET_PDEATHSIG = 1
CHUNK = 65536


class _Call:
    """One running call: its keeper and the pipes still open from it."""

    def __init__(self, keeper: int, pipes: list[int], stdin: int | None) -> None:
        self.keeper = keeper
        self.open_pipes = len(pipes)
        self.stdin = stdin  # the write end of an OPEN call's stdin, until it ends

    def write(self, data: bytes) -> None:
        """Pass bytes to the command's stdin; empty bytes end it."""
        if self.stdin is None:
            return
        try:
            if data:
                view = memoryview(data)
                while view:
                    view = view[os.write(self.stdin, view) :]
                return
        except OSError:  # the command closed its stdin or ended: its EXIT tells the caller
            pass
        self.close_stdin()

    def close_stdin(self) -> None:
        if self.stdin is not None:
            os.close(self.stdin)
            self.stdin = None


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


def _send(number: int, kind: int, data: bytes) -> None:
    _write_all(HEADER.pack(number, kind, len(data)) + data)


def _keeper(
    run_call: Callable[[str, list[str]], int],
    payload: bytes,
    out: int,
    err: int,
    server: int,
    stdin: int | None,
) -> None:
    """In the forked child: become the call's keeper; never returns."""
    status = 1
    try:
        os.setsid()  # a session of its own: Scout's stop by marker ends it, not the server
        _signal.signal(_signal.SIGTERM, _signal.SIG_DFL)
        set_pdeathsig(_signal.SIGTERM)
        if os.getppid() != server:  # it died before the line above: nothing may run
            return
        os.dup2(os.open(os.devnull, os.O_RDONLY) if stdin is None else stdin, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        _close_inherited()  # the channel, the other calls' pipes
        spec, *argv = [word.decode("utf-8", "surrogateescape") for word in payload.split(b"\0")]
        status = run_call(spec, argv)
    except BaseException:  # the command's own child, too, ends here if it did not exec
        import traceback  # here: only a keeper that failed pays for it

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)


def set_pdeathsig(number: int) -> None:
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, number, 0, 0, 0)


def _close_inherited() -> None:
    """Close every descriptor above stderr (listed, not counted up to a limit that may be a
    million)."""
    for name in os.listdir("/proc/self/fd"):
        if int(name) > 2:
            try:
                os.close(int(name))
            except OSError:
                continue


def _exit_code(status: int) -> int:
    """As a shell reports it (os.waitstatus_to_exitcode is Python 3.9+)."""
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def serve(run_call: Callable[[str, list[str]], int]) -> int:
    """Answer RUN and KILL frames on stdin until it ends; `run_call(spec, argv)` is a keeper's
    work (host_helper.run, with its refusals printed)."""
    calls: dict[int, _Call] = {}
    pipes: dict[int, tuple[int, int]] = {}  # read end -> (call, OUT or ERR)
    poller = select.poll()
    poller.register(0, select.POLLIN)
    pending = b""
    _write_all(READY_LINE)
    try:
        while True:
            for fd, _ in poller.poll():
                if fd == 0:
                    data = os.read(0, CHUNK)
                    if not data:
                        return 0
                    pending += data
                    while len(pending) >= HEADER.size:
                        number, kind, length = HEADER.unpack_from(pending)
                        if len(pending) < HEADER.size + length:
                            break
                        payload = pending[HEADER.size : HEADER.size + length]
                        pending = pending[HEADER.size + length :]
                        if kind in (RUN, OPEN):
                            calls[number] = _start(
                                run_call, number, payload, poller, pipes, kind == OPEN
                            )
                        elif kind == KILL and number in calls:
                            _signal_keeper(calls[number].keeper, _signal.SIGTERM)
                        elif kind == IN and number in calls:
                            calls[number].write(payload)
                    continue
                number, kind = pipes[fd]
                data = os.read(fd, CHUNK)
                if data:
                    _send(number, kind, data)
                    continue
                poller.unregister(fd)
                os.close(fd)
                del pipes[fd]
                call = calls[number]
                call.open_pipes -= 1
                if call.open_pipes == 0:
                    call.close_stdin()
                    _, status = os.waitpid(call.keeper, 0)
                    del calls[number]
                    _send(number, EXIT, str(_exit_code(status)).encode())
    except BrokenPipeError:
        return 0
    finally:
        for call in calls.values():
            _signal_keeper(call.keeper, _signal.SIGTERM)


def _start(
    run_call: Callable[[str, list[str]], int],
    number: int,
    payload: bytes,
    poller: select.poll,
    pipes: dict[int, tuple[int, int]],
    open_stdin: bool,
) -> _Call:
    ends = [os.pipe(), os.pipe()]
    stdin = os.pipe() if open_stdin else None
    server = os.getpid()
    keeper = os.fork()
    if keeper == 0:
        own_stdin = None if stdin is None else stdin[0]
        _keeper(run_call, payload, ends[0][1], ends[1][1], server, own_stdin)
    for (read_end, write_end), kind in ((ends[0], OUT), (ends[1], ERR)):  # no zip(strict=): 3.8
        os.close(write_end)
        pipes[read_end] = (number, kind)
        poller.register(read_end, select.POLLIN)
    if stdin is None:
        return _Call(keeper, [read_end for read_end, _ in ends], None)
    os.close(stdin[0])
    return _Call(keeper, [read_end for read_end, _ in ends], stdin[1])


def _signal_keeper(keeper: int, number: int) -> None:
    try:
        os.kill(keeper, number)
    except OSError:
        return
