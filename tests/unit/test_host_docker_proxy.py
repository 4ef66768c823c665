"""The docker proxy's door: where it finds the daemon, how the call's client is pointed at it.

A proxy is started for real here (a loopback port, a forked serving process) in front of a
unix listener standing in for the daemon: the client config the call gets carries the token,
a request with it reaches the listener, one without is refused, and stopping it closes the port.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

import pytest

from tools.wall.host_docker_proxy import TOKEN_HEADER, point_client, start, stop, upstream_socket


def test_the_daemon_is_reached_only_on_a_unix_socket() -> None:
    assert upstream_socket({}) == ("/var/run/docker.sock", "")
    assert upstream_socket({"DOCKER_HOST": "unix:///run/user/1000/docker.sock"})[0] == (
        "/run/user/1000/docker.sock"
    )
    path, why = upstream_socket({"DOCKER_HOST": "tcp://10.0.0.5:2375"})
    assert path is None and "not a unix socket" in why


def _ask(port: int, headers: str) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(f"GET /v1.41/info HTTP/1.1\r\nHost: d\r\n{headers}\r\n".encode())
        answer = b""
        while chunk := conn.recv(4096):
            answer += chunk
    return answer.decode()


def test_a_started_proxy_serves_the_call_s_client_and_no_one_else(tmp_path: Path) -> None:
    daemon_path = str(tmp_path / "d.sock")
    with socket.socket(socket.AF_UNIX) as daemon:
        daemon.bind(daemon_path)
        daemon.listen()

        def answer_once() -> None:
            seen, _ = daemon.accept()
            with seen:
                seen.recv(4096)
                seen.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")

        proxy = start(daemon_path, "")
        try:
            environ = {"DOCKER_CONTEXT": "remote", "DOCKER_TLS_VERIFY": "1"}
            point_client(proxy, environ, str(tmp_path))  # type: ignore[arg-type]
            assert environ == {
                "DOCKER_HOST": f"tcp://127.0.0.1:{proxy.port}",
                "DOCKER_CONFIG": str(tmp_path / "docker-config"),
            }
            config = json.loads((tmp_path / "docker-config" / "config.json").read_text())
            token = config["HttpHeaders"][TOKEN_HEADER]
            assert "no token" in _ask(proxy.port, "")
            server = threading.Thread(target=answer_once)
            server.start()
            assert _ask(proxy.port, f"{TOKEN_HEADER}: {token}\r\n").endswith("\r\n\r\n{}")
            server.join(timeout=10)
        finally:
            stop(proxy)
    with pytest.raises(ProcessLookupError):  # the serving process is gone with stop()
        os.kill(proxy.pid, 0)
