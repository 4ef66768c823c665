"""The D-Bus proxy's door: where it finds the bus, the handshake, who may connect.

A proxy is started for real (a loopback port, a forked serving process) in front of a private
dbus-daemon (tests/support/private_bus.py). Real clients reach the bus through it: busctl
(sd-bus, EXTERNAL) and gdbus (GLib, which falls back to ANONYMOUS over TCP) read, and are
refused a change with AccessDenied; a refused call that expects no reply gets none; a client of
another uid is closed at once; with no bus to reach, each call is answered why; stopping the
proxy closes its port.
"""

from __future__ import annotations

import os
import socket
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.private_bus import missing_client, private_bus
from tests.unit.test_host_dbus_filter import built_call
from tools.wall.host_dbus_filter import Message, message_length
from tools.wall.host_dbus_proxy import (
    Proxy,
    peer_uid,
    point_client,
    start,
    stop,
    upstream_socket,
)

BUS = ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus")


def test_the_bus_is_reached_only_on_a_unix_socket() -> None:
    assert upstream_socket({}) == ("/run/dbus/system_bus_socket", "")
    assert upstream_socket({"DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/tmp/a%20b,guid=1"}) == (
        "/tmp/a b",
        "",
    )
    assert upstream_socket({"DBUS_SYSTEM_BUS_ADDRESS": "tcp:host=x,port=1;unix:abstract=z"}) == (
        "\0z",
        "",
    )
    path, why = upstream_socket({"DBUS_SYSTEM_BUS_ADDRESS": "tcp:host=10.0.0.5,port=55"})
    assert path is None and "names no unix socket" in why


def test_the_call_s_clients_are_pointed_at_the_proxy_and_at_no_session_bus() -> None:
    environ = {"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/0/bus", "HOME": "/root"}
    point_client(Proxy(4711, 0), environ, "/unused")  # type: ignore[arg-type]
    assert environ == {
        "DBUS_SYSTEM_BUS_ADDRESS": "tcp:host=127.0.0.1,port=4711,family=ipv4",
        "HOME": "/root",
    }


@pytest.fixture(scope="module")
def proxy() -> Iterator[Proxy]:
    if missing_client() is not None:
        pytest.skip(f"{missing_client()} is not installed here (apt-get install dbus)")
    with private_bus() as address:
        started = start(*upstream_socket({"DBUS_SYSTEM_BUS_ADDRESS": address}))
        try:
            yield started
        finally:
            stop(started)


def _client(proxy: Proxy, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": f"tcp:host=127.0.0.1,port={proxy.port}"}
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)


def _gdbus(proxy: Proxy, method: str, *args: str) -> subprocess.CompletedProcess[str]:
    return _client(proxy, "gdbus", "call", "--system", "--dest", BUS[0], "--object-path", BUS[1],
                   "--method", method, *args)  # fmt: skip


def test_sd_bus_and_gdbus_clients_read_through_the_proxy(proxy: Proxy) -> None:
    names = _client(proxy, "busctl", "call", *BUS, "ListNames")
    assert names.returncode == 0 and '"org.freedesktop.DBus"' in names.stdout, names.stderr
    features = _gdbus(proxy, "org.freedesktop.DBus.Properties.GetAll", BUS[2])
    assert features.returncode == 0 and "'Features'" in features.stdout, features.stderr


def test_a_change_is_answered_access_denied_naming_the_method(proxy: Proxy) -> None:
    refused = _gdbus(proxy, "org.freedesktop.DBus.RequestName", "org.scout.x", "0")
    assert refused.returncode != 0
    assert "org.freedesktop.DBus.Error.AccessDenied" in refused.stderr
    assert "org.freedesktop.DBus.RequestName is no read" in refused.stderr
    sd_bus = _client(proxy, "busctl", "call", *BUS, "RequestName", "su", "org.scout.x", "0")
    assert sd_bus.returncode != 0 and "Access denied" in sd_bus.stderr


def _handshake(conn: socket.socket) -> None:
    conn.sendall(b"\0AUTH DBUS_COOKIE_SHA1 30\r\n")
    assert conn.recv(4096) == b"REJECTED EXTERNAL ANONYMOUS\r\n"
    conn.sendall(b"AUTH ANONYMOUS\r\nNEGOTIATE_UNIX_FD\r\n")
    answer = b""
    while answer.count(b"\r\n") < 2:
        answer += conn.recv(4096)
    assert answer.startswith(b"OK ")
    assert answer.endswith(b"\r\nERROR no file descriptors through the wall's proxy\r\n")
    conn.sendall(b"BEGIN\r\n")


def _lines(conn: socket.socket, sent: bytes, count: int) -> bytes:
    conn.sendall(sent)
    answer = b""
    while answer.count(b"\r\n") < count:
        chunk = conn.recv(4096)
        if not chunk:
            break
        answer += chunk
    return answer


def test_the_handshake_follows_the_specification_s_server_states(proxy: Proxy) -> None:
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as conn:
        assert _lines(conn, b"\0BEGIN\r\n", 1) == b"ERROR\r\n"  # not authenticated yet
        assert _lines(conn, b"DATA 30\r\n", 1) == b"REJECTED EXTERNAL ANONYMOUS\r\n"
        assert _lines(conn, b"AUTH EXTERNAL\r\n", 1) == b"DATA\r\n"
        assert _lines(conn, b"DATA\r\n", 1).startswith(b"OK ")
        conn.sendall(b"BEGIN\r\n" + _with_serial(built_call("Hello"), 1))
        assert _replies(conn, 1)[0].first_string().startswith(":")
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as conn:
        assert _lines(conn, b"AUTH ANONYMOUS\r\n", 1) == b""  # no credentials byte: closed


def test_the_peer_s_uid_is_read_from_the_kernel_s_socket_table() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as conn:
            accepted, peer = listener.accept()
            with accepted:
                assert peer_uid(peer, port) == os.geteuid()
                assert peer_uid(peer, port + 1 if port < 65535 else 1) is None
                assert conn.getsockname() == peer


def _replies(conn: socket.socket, until_serial: int) -> list[Message]:
    """Messages from the bus up to the reply to `until_serial`."""
    seen, data = [], b""
    while not seen or seen[-1].fields.get("reply_serial") != until_serial:
        while len(data) < 16 or len(data) < message_length(data[:16]):
            data += conn.recv(65536)
        size = message_length(data[:16])
        seen.append(Message(data[:size]))
        data = data[size:]
    return seen


def _with_serial(message: bytes, serial: int, flags: int = 0) -> bytes:
    return message[:2] + bytes((flags,)) + message[3:8] + struct.pack("<I", serial) + message[12:]


def test_a_refused_call_that_expects_no_reply_gets_none(proxy: Proxy) -> None:
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as conn:
        _handshake(conn)
        conn.sendall(_with_serial(built_call("Hello"), 1))
        conn.sendall(_with_serial(built_call("RequestName"), 2, flags=1))  # NO_REPLY_EXPECTED
        conn.sendall(_with_serial(built_call("RequestName"), 3))
        seen = _replies(conn, 3)
    assert 2 not in [m.fields.get("reply_serial") for m in seen]
    assert seen[-1].fields["error_name"] == "org.freedesktop.DBus.Error.AccessDenied"


def test_a_client_of_another_uid_is_closed_at_once(proxy: Proxy) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to run a client as another uid")
    other = _client(proxy, "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                    "busctl", "call", *BUS, "ListNames")  # fmt: skip
    assert other.returncode != 0 and '"org.freedesktop.DBus"' not in other.stdout


def test_a_proxy_that_reaches_no_bus_says_why_to_each_call(tmp_path: Path) -> None:
    if missing_client() is not None:
        pytest.skip(f"{missing_client()} is not installed here (apt-get install dbus)")
    started = start(str(tmp_path / "no-bus"), "")
    try:
        said = _gdbus(started, "org.freedesktop.DBus.GetId")
    finally:
        stop(started)
    assert said.returncode != 0 and "org.freedesktop.DBus.Error.NoServer" in said.stderr
    assert f"reaches no bus: cannot connect to {tmp_path}/no-bus: No such file" in said.stderr


def test_stopping_the_proxy_closes_its_port() -> None:
    started = start("/nonexistent", "")
    stop(started)
    with pytest.raises(ProcessLookupError):
        os.kill(started.pid, 0)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", started.port), timeout=5).close()
