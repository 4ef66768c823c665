"""fork_server: a proxy's server answers on the loopback port it returns, prints nothing of its
own, and stop_server ends it (twice is no error)."""

from __future__ import annotations

import os
import socket

import pytest

from tools.wall.host_proxy_process import fork_server, stop_server


def _answer_once(fd: int) -> None:
    listener = socket.socket(fileno=fd)
    peer, _ = listener.accept()
    os.write(1, b"this line must not reach the caller's output\n")
    peer.sendall(b"served\n")
    peer.recv(1)  # stay until the caller ends it


def test_the_server_answers_on_its_port_and_stops(capfd: pytest.CaptureFixture[str]) -> None:
    port, pid = fork_server(_answer_once)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        assert client.makefile("rb").readline() == b"served\n"
    stop_server(pid)
    stop_server(pid)  # already reaped: nothing to do
    assert not os.path.exists(f"/proc/{pid}")  # killed and reaped, no zombie left
    assert "must not reach" not in capfd.readouterr().out
