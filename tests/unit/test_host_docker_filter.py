"""The read-only docker proxy's judgement of one request, and what it sends on.

The system test (tests/system/test_wall_docker_proxy.py) runs it with a real dockerd inside the
wall; here every rule is shown on its own, with the request the docker client sends for a
read passing and each change, stream, body, upgrade or odd path refused with its reason.
"""

from __future__ import annotations

import socket
import threading

import pytest

from tools.wall import host_docker_filter as proxy
from tools.wall.host_docker_filter import refusal
from tools.wall.host_docker_proxy import TOKEN_HEADER

TOKEN = "0123456789abcdef0123456789abcdef"
PAIR = (TOKEN_HEADER, TOKEN)
CLIENT = [("Host", "api.moby.localhost"), ("User-Agent", "Docker-Client/28.2.2"),
          (TOKEN_HEADER, TOKEN)]  # fmt: skip


@pytest.mark.parametrize(
    "target",
    [
        "/_ping",
        "/v1.41/version",
        "/v1.51/info",
        "/v1.41/containers/json?all=1&filters=%7B%7D",
        "/v1.41/containers/vllm_node/json",
        "/v1.41/containers/3f4e/logs?stderr=1&stdout=1&tail=100&follow=0",
        "/v1.41/containers/vllm_node/stats?stream=0&one-shot=1",
        "/v1.41/containers/vllm_node/stats?stream=+fAlse",  # " fAlse": false to the daemon too
        "/v1.41/containers/vllm_node/top?ps_args=-o+pid%2Ccomm",
        "/v1.41/images/json",
        "/v1.41/images/nvcr.io/nvidia/vllm:25.09-py3/json",
        "/v1.41/images/sha256:abc/history",
        "/v1.41/networks",
        "/v1.41/volumes/data",
        "/v1.41/system/df",
        "/v1.41/events?since=1&until=2",
    ],
)
def test_the_reads_the_docker_client_sends_pass(target: str) -> None:
    assert refusal("GET", target, CLIENT, PAIR) is None
    assert refusal("HEAD", target, CLIENT, PAIR) is None


@pytest.mark.parametrize(
    ("method", "target", "extra", "why"),
    [
        ("POST", "/v1.41/containers/create", [], "POST changes"),
        ("DELETE", "/v1.41/containers/x", [], "DELETE changes"),
        ("PUT", "/v1.41/containers/x/archive?path=/", [], "PUT changes"),
        ("get", "/_ping", [], "get changes"),  # methods are case-sensitive (RFC 9110)
        ("GET", "/v1.41/containers/x/attach/ws?stdin=1", [], "list of read endpoints"),
        ("GET", "/v1.41/containers/x/export", [], "list of read endpoints"),
        ("GET", "/v1.41/images/search?term=x", [], "list of read endpoints"),  # registry
        ("GET", "/v1.41/distribution/x/json", [], "list of read endpoints"),
        ("GET", "/v1.41/secrets", [], "list of read endpoints"),
        ("GET", "/v1.41/containers/x/logs?follow=1", [], "following logs"),
        ("GET", "/v1.41/containers/x/logs?follow=0&follow=true", [], "following logs"),
        ("GET", "/v1.41/containers/x/logs?f%6Fllow=1", [], "following logs"),  # Go decodes keys
        ("GET", "/v1.41/containers/x/logs?follow=%zz", [], "bad %-escape"),
        ("GET", "/v1.41/containers/x/stats", [], "stats stream"),
        ("GET", "/v1.41/containers/x/stats?stream=1", [], "stats stream"),
        ("GET", "/v1.41/events", [], "--until"),
        ("GET", "/_ping", [("Connection", "Upgrade"), ("Upgrade", "tcp")], "upgrades"),
        ("GET", "/_ping", [("Upgrade", "websocket")], "upgrades"),
        ("GET", "/info", [("Content-Length", "5")], "body"),
        ("GET", "/info", [("Transfer-Encoding", "chunked")], "body"),
        ("GET", "/v1.41/containers/../volumes/create", [], "plain API path"),
        ("GET", "/v1.41/containers/%2e%2e/json", [], "plain API path"),
        ("GET", "/v1.41//containers/json", [], "plain API path"),
        ("GET", "/info;x", [], "plain API path"),
        ("GET", "/v1.41/images/../../containers/create/json", [], "plain API path"),
        ("GET", "/v1.41/images//json", [], "plain API path"),
        ("GET", "/v1.41/containers/-x/json", [], "list of read endpoints"),
        ("GET", "/v1.41/containers/x/json/extra", [], "list of read endpoints"),
        ("GET", "/vx.1/info", [], "list of read endpoints"),
        ("GET", "http://d/info", [], "plain API path"),
    ],
)
def test_everything_else_is_refused_with_its_reason(
    method: str, target: str, extra: list[tuple[str, str]], why: str
) -> None:
    said = refusal(method, target, CLIENT + extra, PAIR)
    assert said is not None and why in said, said


def test_only_the_call_s_token_opens_the_proxy() -> None:
    headers = [h for h in CLIENT if h[0] != TOKEN_HEADER]
    for given in ([], [(TOKEN_HEADER, "f" * 32)], [(TOKEN_HEADER.lower(), TOKEN)]):
        said = refusal("GET", "/_ping", headers + given, PAIR)
        assert (said is None) is (given == [(TOKEN_HEADER.lower(), TOKEN)]), given
    assert "no token" in (refusal("GET", "/_ping", headers, PAIR) or "")


def test_a_refused_request_never_reaches_the_daemon(tmp_path) -> None:
    """Served for real on a socketpair: a POST is answered 403 by the proxy; the daemon's
    socket (a listener here) never sees a connection."""
    daemon_path = str(tmp_path / "d.sock")
    with socket.socket(socket.AF_UNIX) as daemon:
        daemon.bind(daemon_path)
        daemon.listen()
        daemon.settimeout(0.2)
        ours, theirs = socket.socketpair()
        with ours:
            ours.sendall(
                f"POST /v1.41/containers/create HTTP/1.1\r\nHost: d\r\n{TOKEN_HEADER}: {TOKEN}"
                '\r\nContent-Length: 2\r\n\r\n{"Image":"x"}'.encode()
            )
            proxy._one_request(theirs, daemon_path, "", PAIR)
            answer = ours.recv(4096).decode()
        assert answer.startswith("HTTP/1.1 403 ") and "POST changes" in answer
        with pytest.raises(TimeoutError):
            daemon.accept()


def test_a_read_reaches_the_daemon_rebuilt_without_the_token_for_one_answer(tmp_path) -> None:
    daemon_path = str(tmp_path / "d.sock")
    with socket.socket(socket.AF_UNIX) as daemon:
        daemon.bind(daemon_path)
        daemon.listen()
        ours, theirs = socket.socketpair()
        serving = threading.Thread(target=proxy._one_request, args=(theirs, daemon_path, "", PAIR))
        with ours:
            ours.sendall(
                f"GET /v1.41/info HTTP/1.1\r\nHost: d\r\nConnection: keep-alive\r\n"
                f"{TOKEN_HEADER}: {TOKEN}\r\n\r\n"
                "POST /v1.41/containers/create HTTP/1.1\r\n\r\n".encode()
            )  # a pipelined second request after the first: never read on, never sent
            serving.start()
            seen, _ = daemon.accept()
            with seen:
                forwarded = seen.recv(4096).decode()
                seen.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
            serving.join(timeout=10)
            assert ours.recv(4096).endswith(b"\r\n\r\n{}")
    assert forwarded.startswith("GET /v1.41/info HTTP/1.1\r\n")
    assert forwarded.endswith("Connection: close\r\n\r\n") and "keep-alive" not in forwarded
    assert TOKEN not in forwarded and "POST" not in forwarded
