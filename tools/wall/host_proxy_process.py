"""The serving process of a wall's proxy (docker's, D-Bus's), on the host: one loopback port,
one forked server, killed with the helper.

Both proxies stand outside the wall for one call: the helper binds the port before it builds
the wall (so the wall can name it), forks the server, and the server must never outlive the
helper (PR_SET_PDEATHSIG) nor print into the call's output. What the server does with the
listening socket is the proxy's own (`serve`).

Standard library only, Python 3.8+, and nothing but os and _socket before the fork: it runs on
the host, on the call's path (tools/wall/command.py ships it).
"""

from __future__ import annotations

import _socket
import os

TYPE_CHECKING = False  # typing's flag, which type checkers read by its name: typing costs more
if TYPE_CHECKING:  # collections.abc brings in collections, operator, itertools, ...
    from collections.abc import Callable

PR_SET_PDEATHSIG, SIGKILL = 1, 9


def fork_server(serve: Callable[[int], None]) -> tuple[int, int]:
    """Bind a loopback port, fork a process that runs `serve(listening fd)` with its standard
    streams on /dev/null and dies with its parent; return (port, pid)."""
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    pid = os.fork()
    if pid == 0:
        try:
            import ctypes

            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
            quiet = os.open(os.devnull, os.O_RDWR)  # nothing of its own in the call's output
            for fd in (0, 1, 2):
                os.dup2(quiet, fd)
            serve(listener.detach())
        finally:
            os._exit(0)
    port = listener.getsockname()[1]
    listener.close()
    return port, pid


def stop_server(pid: int) -> None:
    """Kill the server and reap it (one already gone is no error)."""
    try:
        os.kill(pid, SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass
