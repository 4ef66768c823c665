"""What a fake tool in a host's bin folder runs: hand the command to the host's tool server.

Hosts use the compiled twin of this client (client.c) when the simulator found a C compiler;
this one serves where it did not, and runs the tool in-process for both when a host has no server.

The client passes its argv, cwd, environment and its own stdin/stdout/stderr descriptors to the
server (sim/fakehost/server.py), which runs the tool in a forked child that writes straight to
those descriptors, so output streams as it is produced and pipes behave as with a local process.
Signals the client gets (the `timeout` wrapper's TERM, a Ctrl-C) are passed on; if the client is
killed outright, the server sees its socket close and kills the tool. The client then exits the
way the tool did: same exit code, or the same signal.

In a command the server launched, socket() is refused (seccomp.py): the client makes a
socketpair() instead and hands one end to the server over the broker the command inherited
(wire.BROKER_FD). Anywhere else it connects to the server's socket. Without a server (a host
folder used on its own, e.g. bind-mounted under a real sshd), the tool runs in this process
instead, as every fake tool did before the server existed.

Only interpreter builtins are imported on the server path (`posix`, `_socket`, `_signal`): this
runs for every fake command, and its start-up time is the simulator's cost per command.
"""

from __future__ import annotations

import _signal
import _socket
import posix
import sys

from .wire import BROKER_FD, SOCKET_DIR, SOCKET_NAME, STD_STREAMS, encode_request

FORWARDED_SIGNALS = (
    _signal.SIGHUP,
    _signal.SIGINT,
    _signal.SIGQUIT,
    _signal.SIGTERM,
    _signal.SIGUSR1,
    _signal.SIGUSR2,
    _signal.SIGALRM,
)
NO_SERVER_STATUS = 126
_O_DIRECTORY = 0o200000  # Linux value; posix.O_DIRECTORY is absent on some builds


def _fs(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _open_streams() -> list[int]:
    opened = []
    for fd in STD_STREAMS:
        try:
            posix.fstat(fd)
        except OSError:
            continue
        opened.append(fd)
    return opened


def _brokered() -> _socket.socket | None:
    """A connection to the server through the inherited broker, or None without a broker."""
    try:
        broker = _socket.socket(fileno=BROKER_FD)
    except OSError:
        return None
    try:
        if broker.type != _socket.SOCK_SEQPACKET:
            return None
        ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            fd = theirs.fileno().to_bytes(4, sys.byteorder)
            broker.sendmsg([b"c"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fd)])
        finally:
            theirs.close()
        return ours
    finally:
        broker.detach()  # the descriptor stays open for the command's other clients


def _connect(host_dir: str) -> _socket.socket | None:
    """The server's socket, or None when this host folder has no server at all.

    The socket is reached through /proc/self/fd/N so that its path stays short whatever the
    host folder's length (a Unix socket path is limited to 107 bytes).
    """
    try:
        dir_fd = posix.open(f"{host_dir}/{SOCKET_DIR}", posix.O_RDONLY | _O_DIRECTORY)
    except FileNotFoundError:
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(f"/proc/self/fd/{dir_fd}/{SOCKET_NAME}")
    except FileNotFoundError:
        sock.close()
        return None
    finally:
        posix.close(dir_fd)
    return sock


def _run_here(tool: str, host_dir: str) -> int:
    from .main import main

    return main(tool, host_dir)


def _finish(answer: bytes) -> int:
    if answer.startswith(b"s"):
        sig = int(answer[1:])
        _signal.signal(sig, _signal.SIG_DFL)
        posix.kill(posix.getpid(), sig)
        return 128 + sig
    return int(answer[1:])


def forward(tool: str, host_dir: str) -> int:
    """Run `tool` with this process's argv and streams on the host's server; its exit status."""
    try:
        sock = _brokered() or _connect(host_dir)
    except OSError as exc:
        sys.stderr.write(
            f"{tool}: cannot reach the tool server of this simulated host ({exc.strerror}); "
            "if the simulator stopped, restart it\n"
        )
        return NO_SERVER_STATUS
    if sock is None:
        return _run_here(tool, host_dir)
    streams = _open_streams()
    env = [b"%s=%s" % item for item in posix.environ.items()]
    args = [_fs(a) for a in sys.argv[1:]]
    named = "".join(map(str, streams)).encode()
    request = encode_request(tool, posix.getcwdb(), named, args, env)
    fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in streams)
    sock.sendmsg([request], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])

    def pass_on(signum: int, _frame: object) -> None:
        try:  # noqa: SIM105 (contextlib would cost this hot path an import)
            sock.send(b"k%d\n" % signum)
        except OSError:
            pass  # the tool has already ended; its answer is on the way

    for sig in FORWARDED_SIGNALS:
        _signal.signal(sig, pass_on)
    answer = b""
    while not answer.endswith(b"\n"):
        chunk = sock.recv(64)
        if not chunk:
            sys.stderr.write(f"{tool}: the simulated host's tool server went away\n")
            return NO_SERVER_STATUS
        answer += chunk
    return _finish(answer.strip())
