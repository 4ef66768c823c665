"""fork_server: a proxy's server answers on the loopback port it returns, prints nothing of its
own, and stop_server ends it (twice is no error). On the host, where the proxies load it from
the helper's folder, importing them costs the call nothing beyond their files and _socket."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tools.wall.command import HELPER_SOURCES
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


# As the host runs the proxies: from a folder of the shipped files, no package around them, once
# the helper is imported (the launch line's import, tools/wall/command.py); each proxy serves a
# port and is stopped.
ON_THE_HOST = """
import sys
sys.path.insert(0, sys.argv[1])
import host_helper
before = set(sys.modules)
proxies = [host_helper.proxy_module(name) for name in ("host_docker_proxy", "host_dbus_proxy")]
print(" ".join(sorted(set(sys.modules) - before)))
import os, socket
for module in proxies:
    proxy = module.start(None, "no daemon in this test")
    socket.create_connection(("127.0.0.1", proxy.port), timeout=30).close()
    module.stop(proxy)
    print(module.__name__, os.path.exists(f"/proc/{proxy.pid}"))
"""


def test_on_the_host_the_proxies_fork_through_the_shipped_module(tmp_path: Path) -> None:
    for name, text in HELPER_SOURCES.items():
        (tmp_path / name).write_text(text)
    run = [sys.executable, "-I", "-S", "-c", ON_THE_HOST, str(tmp_path)]
    said = subprocess.run(run, capture_output=True, text=True, timeout=60, check=True).stdout
    imported, *stopped = said.splitlines()
    # what the call's path pays before its command starts: the proxies and the binding alone
    assert imported == "_socket host_dbus_proxy host_docker_proxy host_proxy_process"
    assert stopped == ["host_docker_proxy False", "host_dbus_proxy False"]
