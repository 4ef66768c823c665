"""Running a fake tool inside its host's tool server, without a fork, when that cannot matter.

Forking the server costs ~5 ms of CPU (copying its page tables, then a copy-on-write fault for
every page the child touches); a report tool (`hostname`, `nvidia-smi`, `docker ps`, ...) needs
a tenth of that. Such a tool only reads the host's state and prints: it does not read stdin,
sleep, signal, fork or change the state, so the server can run it itself and hand its output
over. What the client sees is the same: the same bytes in the same order on the same
descriptors, the same exit status.

The server's loop must never block, so the output is written only when every descriptor can take
it at once (a file, /dev/null, a pipe or socket with room); otherwise (or for any tool and
arguments not listed below, or an injected hang) the tool runs in a forked child as usual.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import stat
import sys
import termios
import traceback
from collections.abc import Callable

from .main import hang_requested
from .main import main as run_tool
from .state import HOST_DIR_ENV, read_state, resolve_host_dir

F_GETPIPE_SZ = 1032
SOCKET_ROOM_BYTES = 32 * 1024  # far below a Unix socket's send buffer (about 200 KiB)
BROKEN_PIPE_STATUS = 141


def _words(args: list[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]


def _docker_reads(args: list[str]) -> bool:
    words = _words(args)
    if words[:1] in (["container"], ["image"]):
        words = [{"ls": "ps", "list": "ps"}.get(words[1], words[1]) if len(words) > 1 else ""]
    return words[:1] in (["version"], ["info"], ["ps"], ["images"], ["inspect"])


def _ip_reads(args: list[str]) -> bool:
    return not {"set", "add", "del", "delete", "flush", "change", "replace"} & set(args)


# Tools that only read the state and print, and for which arguments.
REPORTS: dict[str, Callable[[list[str]], bool]] = {
    **dict.fromkeys(
        ("hostname", "uname", "lscpu", "nproc", "free", "df", "du", "id", "whoami", "ss",
         "nvcc", "python3", "python", "ibdev2netdev", "ibstat", "ethtool", "rdma", "nvidia-smi"),
        lambda _args: True,
    ),
    "cat": lambda args: bool(args) and "-" not in args,  # cat without a file reads stdin
    "pip": lambda args: args[:1] in (["list"], ["freeze"], ["--version"]),
    "pip3": lambda args: args[:1] in (["list"], ["freeze"], ["--version"]),
    "docker": _docker_reads,
    "ip": _ip_reads,
}  # fmt: skip


class _Chunks(io.RawIOBase):
    """What a tool wrote to one stream, appended in order to the list both streams share."""

    def __init__(self, fd: int, chunks: list[tuple[int, bytes]]) -> None:
        self._fd, self._chunks = fd, chunks

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self._chunks.append((self._fd, bytes(data)))
        return len(data)


@contextlib.contextmanager
def _as_the_client(cwd: bytes, env: list[bytes], argv: list[str]):  # type: ignore[no-untyped-def]
    """The tool's own cwd, environment and argv for the length of the block, then the server's."""
    saved_env, saved_argv, saved_cwd = dict(os.environb), sys.argv, os.getcwd()
    saved_streams = sys.stdout, sys.stderr
    os.environb.clear()
    os.environb.update(item.partition(b"=")[::2] for item in env if b"=" in item)
    with contextlib.suppress(OSError):
        os.chdir(cwd)
    sys.argv = argv
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environb.clear()
        os.environb.update(saved_env)


def run_report(
    host_dir: str, tool: str, cwd: bytes, args: list[bytes], env: list[bytes]
) -> tuple[int, list[tuple[int, bytes]]] | None:
    """(exit code, output chunks by stream) of a report tool run here; None to fork instead."""
    argv = [tool, *(os.fsdecode(a) for a in args)]
    allowed = REPORTS.get(tool)
    if allowed is None or not allowed(argv[1:]):
        return None
    if tool == "docker" and any(item.startswith(b"SCOUT_WALL=") for item in env):
        return None  # the forked child asks the kernel whether the caller is walled (children.py)
    with _as_the_client(cwd, env, argv):
        os.environ[HOST_DIR_ENV] = host_dir
        try:
            if hang_requested(tool, argv[1:], read_state(resolve_host_dir(host_dir))):
                return None
        except (OSError, ValueError):
            return None
        chunks: list[tuple[int, bytes]] = []
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(_Chunks(1, chunks)), encoding="utf-8")
        sys.stderr = io.TextIOWrapper(
            _Chunks(2, chunks), encoding="utf-8", errors="backslashreplace", write_through=True
        )  # type: ignore[arg-type]
        try:
            code = run_tool(tool, host_dir)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        except Exception:
            traceback.print_exc()
            code = 1
        with contextlib.suppress(Exception):
            sys.stdout.flush()
    return code, chunks


def _room(fd: int) -> int | None:
    """Bytes `fd` takes without blocking; None when that cannot be known."""
    try:
        info = os.fstat(fd)
    except OSError:
        return None
    if stat.S_ISREG(info.st_mode):
        return sys.maxsize
    if stat.S_ISCHR(info.st_mode) and info.st_rdev == os.stat(os.devnull).st_rdev:
        return sys.maxsize
    try:
        if stat.S_ISFIFO(info.st_mode):
            queued = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
            return fcntl.fcntl(fd, F_GETPIPE_SZ) - int.from_bytes(queued, sys.byteorder)
        if stat.S_ISSOCK(info.st_mode):
            queued = fcntl.ioctl(fd, termios.TIOCOUTQ, b"\0\0\0\0")
            return SOCKET_ROOM_BYTES - int.from_bytes(queued, sys.byteorder)
    except OSError:
        return None
    return None


def deliver(chunks: list[tuple[int, bytes]], fds: dict[int, int]) -> int | None:
    """Write the chunks to the client's descriptors; None (nothing written) if one could block.

    Returns the exit status the writing itself imposes: 0, or BROKEN_PIPE_STATUS when a reader
    had gone (the tool would have died of SIGPIPE; forked tools report it the same way).
    """
    wanted: dict[int, int] = {}
    for stream, data in chunks:
        if stream in fds:
            wanted[fds[stream]] = wanted.get(fds[stream], 0) + len(data)
    for fd, size in wanted.items():
        room = _room(fd)
        if room is None or room < size:
            return None
    for stream, data in chunks:
        if stream not in fds:
            continue
        try:
            os.write(fds[stream], data)
        except BrokenPipeError:
            return BROKEN_PIPE_STATUS
        except OSError:
            continue
    return 0
