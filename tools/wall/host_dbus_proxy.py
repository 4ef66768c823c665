"""The wall's door to the system bus, on the host: a read-only D-Bus proxy for one call.

The bus is a unix socket, which the wall closes (no socket(AF_UNIX), host_seccomp.py), and a
method call on it can restart a unit or take a link down. A walled call whose line uses a
D-Bus client (systemctl, busctl, gdbus, nmcli, ...) gets a proxy instead, as docker gets one
(host_docker_proxy.py): the helper binds a loopback TCP port before it builds the wall, forks
the serving process outside it, names the port among the call's ports and points the call's
clients at it (DBUS_SYSTEM_BUS_ADDRESS=tcp:host=127.0.0.1,port=P, which sd-bus and GDBus
read; systemctl as root first tries /run/systemd/private, meets the closed socket and falls
back to that address). Messages the client sends are judged one by one by
host_dbus_filter.py: reads alone reach the bus, the rest get AccessDenied.

The proxy speaks the SASL handshake on both sides (D-Bus specification, "Authentication
Protocol"): to the client it is a server taking EXTERNAL or ANONYMOUS (GDBus has no
credentials to offer over TCP and takes ANONYMOUS), refusing NEGOTIATE_UNIX_FD (no file
descriptor travels through it); upstream it connects to the bus's unix socket (the helper's
DBUS_SYSTEM_BUS_ADDRESS where it names one, else the system bus's default path) and
authenticates EXTERNAL as itself, so the bus grants what the helper's uid has, no more.

Who may connect: D-Bus carries no header a per-call token could ride in (the client library
writes the handshake), so the proxy checks the peer instead: TCP has no SO_PEERCRED, but the
kernel's table of TCP sockets (/proc/net/tcp, its uid column) names the uid that owns the
peer's end. A peer of another uid is closed at once; one of the helper's own uid could reach
the bus itself with the same rights, so it gains nothing by the port.

Standard library only, Python 3.8+: it runs on the host (tools/wall/command.py ships it).
This module is what the helper runs before the command starts: it imports nothing but os,
_socket and host_proxy_process.py (which binds and forks with those two alone) until the
serving process, after the fork, reaches `serve`.
"""

from __future__ import annotations

import _socket
import os
import sys
from types import ModuleType  # the helper's ctypes imported it already

if __package__:  # inside Scout's tree
    from tools.wall import host_proxy_process
else:  # on a host: the sibling file in the helper's folder, which the launch line put first
    # on sys.path. __import__, as host_helper.py loads its siblings: an import statement naming
    # it would read as a third-party package (tests/unit/test_dependency_range.py)
    host_proxy_process = __import__("host_proxy_process")

DEFAULT_BUS = (
    "/run/dbus/system_bus_socket"  # D-Bus specification, "Well-known Message Bus Instances"
)
MAX_LINE, MAX_LINES = 16 * 1024, 32


class Proxy:
    """A started proxy: the port the call connects to, the serving process."""

    def __init__(self, port: int, pid: int) -> None:
        self.port, self.pid = port, pid


def upstream_socket(environ: dict[str, str]) -> tuple[str | None, str]:
    """The system bus's unix socket (the first `unix:path=` or `unix:abstract=` of the
    environment's DBUS_SYSTEM_BUS_ADDRESS, else the default path), or None and why."""
    address = environ.get("DBUS_SYSTEM_BUS_ADDRESS") or f"unix:path={DEFAULT_BUS}"
    for entry in address.split(";"):
        kind, _, options = entry.partition(":")
        pairs = dict(pair.partition("=")[::2] for pair in options.split(","))
        if kind == "unix" and pairs.get("path"):
            return _unescaped(pairs["path"]), ""
        if kind == "unix" and pairs.get("abstract"):
            return "\0" + _unescaped(pairs["abstract"]), ""
    return None, f"DBUS_SYSTEM_BUS_ADDRESS={address} names no unix socket the proxy reaches"


def _unescaped(value: str) -> str:
    """An address value with its %XX escapes undone (the specification's "Server Addresses")."""
    parts = value.split("%")
    return parts[0] + "".join(chr(int(p[:2], 16)) + p[2:] for p in parts[1:])


def start(upstream: str | None, why_not: str) -> Proxy:
    """Bind a loopback port, fork the serving process (killed with the helper), return it."""
    port, pid = host_proxy_process.fork_server(lambda fd: serve(fd, upstream, why_not))
    return Proxy(port, pid)


def point_client(proxy: Proxy, environ: os._Environ[str], _folder: str) -> None:
    """Point the call's D-Bus clients at the proxy for the system bus; the session bus's
    address goes (it is no bus the proxy stands for; inside the wall no unix socket opens,
    so a client asking for it fails). `_folder`, the call's scratch folder, which docker's
    proxy writes its client config to, D-Bus needs none."""
    environ["DBUS_SYSTEM_BUS_ADDRESS"] = f"tcp:host=127.0.0.1,port={proxy.port},family=ipv4"
    for name in ("DBUS_SESSION_BUS_ADDRESS", "DBUS_STARTER_ADDRESS", "DBUS_STARTER_BUS_TYPE"):
        environ.pop(name, None)


def stop(proxy: Proxy) -> None:
    host_proxy_process.stop_server(proxy.pid)


def serve(listener_fd: int, upstream: str | None, why_not: str) -> None:
    """Answer connections on the listening socket until the helper kills this process."""
    import _thread

    listener = _socket.socket(fileno=listener_fd)
    port = listener.getsockname()[1]
    while True:
        client_fd, peer = listener._accept()
        client = _socket.socket(fileno=client_fd)
        _thread.start_new_thread(_one_connection, (client, peer, port, upstream, why_not))


def _one_connection(
    client: _socket.socket, peer: tuple[str, int], port: int, upstream: str | None, why_not: str
) -> None:
    """Check the peer, authenticate both sides, then relay until either side closes; where
    the bus cannot be reached, answer every call with why."""
    bus = None
    try:
        if peer_uid(peer, port) != os.geteuid():
            return
        bus, why_not = _upstream(upstream, why_not)
        rest = _authenticate_client(client)
        if rest is None:
            return
        if bus is None:
            return _answer_no_bus(client, rest, why_not)
        _relay(client, bus, rest)
    except OSError:
        pass
    finally:
        client.close()
        if bus is not None:
            bus.close()


def _upstream(path: str | None, why_not: str) -> tuple[_socket.socket | None, str]:
    """The bus, connected and authenticated; or None and why it cannot be."""
    if path is None:
        return None, why_not
    bus = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        bus.connect(path)
        _authenticate_upstream(bus)
    except OSError as exc:
        bus.close()
        shown = path.replace("\0", "@")
        return None, f"cannot connect to {shown}: {exc.strerror or exc}"
    return bus, ""


def _answer_no_bus(client: _socket.socket, rest: bytes, why: str) -> None:
    """NoServer for each call the client makes, so it prints why instead of a lost link."""
    checker, serial = _filter(), 0x80000000
    while True:
        message, rest = _read_message(client, rest, checker)
        call = checker.refusal(message)[1]
        if call is None:
            return
        if call.kind == checker.METHOD_CALL and not call.flags & checker.NO_REPLY_EXPECTED:
            serial += 1
            said = f"the wall's D-Bus proxy reaches no bus: {why}"
            client.sendall(checker.error_reply(call, checker.NO_SERVER, said, serial))


def peer_uid(peer: tuple[str, int], port: int) -> int | None:
    """The uid owning the client's end of its connection to the proxy (the established TCP
    socket from `peer` to 127.0.0.1:`port`), from the kernel's socket table; None when no
    such socket is listed."""
    local, remote = _table_address(*peer), _table_address("127.0.0.1", port)
    try:
        with open("/proc/net/tcp") as f:
            lines = f.read().splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if fields[1] == local and fields[2] == remote and fields[3] == "01":  # ESTABLISHED
            return int(fields[7])
    return None


def _table_address(address: str, port: int) -> str:
    """An IPv4 address and port as /proc/net/tcp writes them: the address's four bytes read as
    one native-endian number, then the port, in hex."""
    packed = bytes(int(part) for part in address.split("."))
    return f"{int.from_bytes(packed, sys.byteorder):08X}:{port:04X}"


def _authenticate_upstream(bus: _socket.socket) -> None:
    """EXTERNAL as this process's uid; OSError where the bus does not say OK."""
    uid = str(os.geteuid()).encode().hex()
    bus.sendall(b"\0AUTH EXTERNAL " + uid.encode() + b"\r\n")
    answer = b""
    while b"\r\n" not in answer:
        chunk = bus.recv(4096)
        if not chunk or len(answer) > MAX_LINE:
            raise OSError("the bus closed the handshake")
        answer += chunk
    if not answer.startswith(b"OK "):
        raise OSError("the bus refused EXTERNAL")
    bus.sendall(b"BEGIN\r\n")


def _authenticate_client(client: _socket.socket) -> bytes | None:
    """Be the client's SASL server; the bytes after its BEGIN (its first messages), or None
    where it gave up, never began, or sent no credentials byte first."""
    data = _received(client)
    if data[:1] != b"\0":  # the byte every client sends before its first line
        return None
    data, state, guid = data[1:], "auth", os.urandom(16).hex().encode()
    for _ in range(MAX_LINES):
        while b"\r\n" not in data:
            if len(data) > MAX_LINE:
                return None
            data += _received(client)
        line, data = data.split(b"\r\n", 1)
        command, _, argument = line.partition(b" ")
        if state == "ok" and command == b"BEGIN":
            return data
        answer, state = _sasl_answer(state, command, argument)
        client.sendall(answer.replace(b"GUID", guid))
    return None


def _sasl_answer(state: str, command: bytes, argument: bytes) -> tuple[bytes, str]:
    """The server's answer to one line of the client's, and its state after it (the
    specification's server states: "auth" waits for AUTH, "data" for EXTERNAL's identity,
    "ok" for BEGIN). Which identity EXTERNAL claims is not read: peer_uid checked the peer."""
    mechanism = argument.partition(b" ")[0]
    if state == "auth" and command == b"AUTH" and argument == b"EXTERNAL":
        return b"DATA\r\n", "data"  # it sends its identity next (or an empty DATA)
    if (state == "auth" and command == b"AUTH" and mechanism in (b"EXTERNAL", b"ANONYMOUS")) or (
        state == "data" and command == b"DATA"
    ):
        return b"OK GUID\r\n", "ok"
    if state == "ok" and command == b"NEGOTIATE_UNIX_FD":
        return b"ERROR no file descriptors through the wall's proxy\r\n", "ok"
    if state != "ok" and command in (b"AUTH", b"CANCEL", b"ERROR", b"DATA"):
        return b"REJECTED EXTERNAL ANONYMOUS\r\n", "auth"
    return b"ERROR\r\n", state


def _relay(client: _socket.socket, bus: _socket.socket, rest: bytes) -> None:
    """The bus's messages to the client as they come, in a thread; the client's messages to
    the bus one by one as the filter judges them. A lock keeps an error reply from landing
    inside a message the bus is sending."""
    import _thread

    checker = _filter()
    lock = _thread.allocate_lock()
    done = _thread.allocate_lock()
    done.acquire()

    def from_bus() -> None:
        try:
            pending = b""
            while True:
                message, pending = _read_message(bus, pending, checker)
                with lock:
                    client.sendall(message)
        except (OSError, ValueError):
            pass
        finally:
            _shut(client)
            done.release()

    _thread.start_new_thread(from_bus, ())
    serial = 0
    try:
        while True:
            message, rest = _read_message(client, rest, checker)
            why, parsed = checker.refusal(message)
            if why is None:
                bus.sendall(message)
                continue
            if parsed is None:
                return  # unreadable: no reply can name it, and the stream is lost
            if parsed.kind == checker.METHOD_CALL and not parsed.flags & checker.NO_REPLY_EXPECTED:
                serial = serial + 1 if serial < 0x7FFFFFFF else 1
                said = checker.REFUSED + why
                reply = checker.error_reply(
                    parsed, checker.ACCESS_DENIED, said, 0x80000000 + serial
                )
                with lock:
                    client.sendall(reply)
    except (OSError, ValueError):
        pass
    finally:
        _shut(bus)
        done.acquire()


def _shut(sock: _socket.socket) -> None:
    """End both directions, so the other relaying thread's recv returns."""
    try:  # noqa: SIM105 (contextlib would be one more import on the call's path)
        sock.shutdown(_socket.SHUT_RDWR)
    except OSError:
        pass


def _read_message(sock: _socket.socket, pending: bytes, checker: ModuleType) -> tuple[bytes, bytes]:
    """One whole message from `sock` (after the bytes already read), and what followed it."""
    while len(pending) < 16:
        pending += _received(sock)
    length = checker.message_length(pending[:16])
    while len(pending) < length:
        pending += _received(sock)
    return pending[:length], pending[length:]


def _received(sock: _socket.socket) -> bytes:
    chunk = sock.recv(65536)
    if not chunk:
        raise OSError("closed")
    return chunk


def _filter() -> ModuleType:
    """host_dbus_filter: imported only by the serving process, after the fork."""
    if __package__:
        from tools.wall import host_dbus_filter

        return host_dbus_filter
    return __import__("host_dbus_filter")
