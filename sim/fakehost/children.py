"""What a tool server's forked child becomes: a fake tool's process, or a sandboxed command.

Both take over the streams their requester handed in (wire.py) and never return: a tool child
exits with the tool's status, a command child execs HOST_DIR/sandbox/launch once it is walled
in (confinement.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import signal
import sys
import traceback

from . import procs
from .confinement import ConfineError, confine_command
from .main import main as run_tool
from .scout_wall import REFUSED, WALLED_ENV, caller_walled
from .state import HOST_DIR_ENV
from .wire import BROKER_FD, CONFINED_ENV, STD_STREAMS

PR_SET_NAME = 15
UNCONFINED_REASON_ENV = "SCOUT_SIM_UNCONFINED"  # why a command runs without the wall
_libc = ctypes.CDLL(None, use_errno=True)


class Title:
    """Rewrites this process's /proc/PID/cmdline in place, like setproctitle does on Linux."""

    def __init__(self) -> None:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        self.start, self.end = int(fields[45]), int(fields[46])  # arg_start, arg_end

    def set(self, cmdline: bytes) -> None:
        room = self.end - self.start
        data = cmdline[: room - 1].ljust(room, b"\0")
        ctypes.memmove(self.start, data, room)


def set_process_name(name: str) -> None:
    """What /proc/PID/comm and `pkill NAME` see (prctl: a walled-in process may not write /proc)."""
    _libc.prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)


def take_streams(streams: bytes, fds: list[int], keep: tuple[int, ...] = ()) -> None:
    """Make the handed-in descriptors 0/1/2 (one not handed in stays closed); close the rest."""
    passed = [int(chr(c)) for c in streams]
    for target in STD_STREAMS:
        if target in passed:
            os.dup2(fds[passed.index(target)], target)
        else:
            os.close(target)
    low = max(STD_STREAMS) + 1
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))


def default_signals(*more: signal.Signals) -> None:
    """Drop the server's own handlers (and reset `more` too, e.g. what Python ignores)."""
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP, *more):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def run_tool_child(
    host_dir: str,
    title: Title,
    request: tuple[str, bytes, bytes, list[bytes], list[bytes]],
    fds: list[int],
    peer_pid: int,
    peer_cmdline: bytes,
) -> None:
    """Become the tool's process, run it, exit with its status."""
    tool, cwd, streams, args, env = request
    code = 1
    gc.disable()  # a short-lived child: its garbage goes with it
    try:
        os.setpgid(0, 0)
        take_streams(streams, fds)
        default_signals()
        os.environb.clear()
        os.environb.update(item.partition(b"=")[::2] for item in env if b"=" in item)
        os.environ[HOST_DIR_ENV] = host_dir  # this server's host, whatever the client said
        os.environ.pop(WALLED_ENV, None)
        if caller_walled(peer_pid):
            os.environ[WALLED_ENV] = "1"
            if tool in REFUSED:
                sys.stderr.write(REFUSED[tool] + "\n")
                os._exit(1)
        with contextlib.suppress(OSError):
            os.chdir(cwd)
        title.set(peer_cmdline or tool.encode())
        set_process_name(tool)
        procs.spare(peer_pid)
        sys.argv = [tool, *(os.fsdecode(a) for a in args)]
        code = run_tool(tool, host_dir)
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


def run_writer_child(
    streams: bytes, fds: list[int], chunks: list[tuple[int, bytes]], code: int
) -> None:
    """Hand over what a tool run inside the server printed (inline.py), where writing might
    block; exit with the tool's status, or 141 if a reader had gone (as a forked tool would)."""
    gc.disable()
    try:
        os.setpgid(0, 0)
        take_streams(streams, fds)
        default_signals()
        for stream, data in chunks:
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(stream, view) :]
                except BrokenPipeError:
                    os._exit(141)
                except OSError:  # a stream the client did not hand in
                    break
    except BaseException:
        with contextlib.suppress(Exception):
            traceback.print_exc()
    os._exit(code & 0xFF)


def run_command_child(
    host_dir: str, streams: bytes, fds: list[int], broker: int, args: list[bytes]
) -> None:
    """Become a command of the host: own session, its streams, the broker, walled in; exec
    sandbox/launch with `args` (an SSH command line, or nothing for a script on stdin)."""
    try:
        os.setsid()
        os.dup2(broker, BROKER_FD, inheritable=True)
        take_streams(streams, fds, keep=(BROKER_FD,))
        default_signals(signal.SIGPIPE, signal.SIGXFSZ)  # Python ignores these; a shell must not
        home = os.path.join(host_dir, "home")
        os.chdir(home)
        env = {"PATH": "/usr/bin:/bin", HOST_DIR_ENV: host_dir, "LANG": "C.UTF-8"}
        try:
            confine_command(host_dir)
            env[CONFINED_ENV] = "1"
        except ConfineError as exc:
            env[CONFINED_ENV] = "0"
            env[UNCONFINED_REASON_ENV] = str(exc)
        launch = os.path.join(host_dir, "sandbox", "launch")
        os.execve(launch, [launch, *(os.fsdecode(a) for a in args)], env)
    except BaseException:
        with contextlib.suppress(Exception):
            traceback.print_exc()
    os._exit(127)
