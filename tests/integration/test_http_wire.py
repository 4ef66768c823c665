"""`scout mcp --http` serves Streamable HTTP behind a bearer token, on loopback by default:
the SDK's own HTTP client with the token discovers and calls; without it, or with another
token, the server answers 401 with the challenge and runs nothing; no token, no server.

Needs the optional extra: pip install -e '.[mcp,test]' (the `mcp` SDK 2.3).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="needs the extra: pip install -e '.[mcp,test]' (mcp 2.3)")

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation

from agent.faces.cli import main
from tests.support.mcp_kit import ROOT, SCOUT, status, story_calls, transcript_events

TOKEN = secrets.token_hex(32)


@contextlib.contextmanager
def scout_http(home: Path, *args: str, token: str = TOKEN) -> Iterator[str]:
    """`scout mcp --http 127.0.0.1:0 ARGS`; yields the URL it announces on stderr."""
    env = {**os.environ, "SCOUT_HOME": str(home), "NO_COLOR": "1", "SCOUT_MCP_TOKEN": token}
    process = subprocess.Popen(
        [SCOUT, "mcp", "--http", "127.0.0.1:0", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert "serving http://127.0.0.1:" in line, line
        yield line.split("serving ", 1)[1].split()[0]
    finally:
        process.terminate()
        process.wait(timeout=60)


def client(url: str, token: str | None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else None
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    return Client(transport, client_info=Implementation(name="remote-host", version="1.0"))


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_with_the_token_the_sdk_client_discovers_and_calls(tmp_path):
    home = tmp_path / "home"
    first_read = story_calls()[0]
    with scout_http(home, "--sim", "fresh-pair") as url:
        assert url.endswith("/mcp")
        async with client(url, TOKEN) as session:
            assert "2026-07-28" in session.session.discover_result.supported_versions
            assert "propose_plan" in {t.name for t in (await session.list_tools()).tools}
            assert status(await session.call_tool(*first_read)) == "done"
    callers = [e for e in transcript_events(home) if e["type"] == "client_call"]
    assert [
        (e["client"], e["principal"].endswith("(bearer token over HTTP)")) for e in callers
    ] == [("remote-host 1.0", True)]


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_without_the_token_nothing_is_served(tmp_path):
    home = tmp_path / "home"
    name, arguments = story_calls()[0]
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name}}
    with scout_http(home, "--sim", "fresh-pair") as url:
        for token in (None, secrets.token_hex(32), TOKEN[:-1]):
            with pytest.raises(BaseExceptionGroup, match="TaskGroup"):  # the SDK's own error
                async with client(url, token) as session:
                    await session.call_tool(name, arguments)
            async with httpx2.AsyncClient() as plain:
                headers = {"Authorization": f"Bearer {token}"} if token else {}
                answer = await plain.post(url, json=call, headers=headers)
            assert answer.status_code == 401
            assert answer.headers["www-authenticate"].startswith("Bearer")
            assert "resource_metadata=" in answer.headers["www-authenticate"]
    assert not list((home / "transcripts").glob("mcp-*.jsonl"))  # no session ever opened


@pytest.mark.slow
def test_no_token_no_server(tmp_path):
    env = {**os.environ, "SCOUT_HOME": str(tmp_path), "SCOUT_MCP_TOKEN": "short"}
    ran = subprocess.run(
        [SCOUT, "mcp", "--sim", "fresh-pair", "--http", "0"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    assert ran.returncode == 1 and "needs a bearer token of at least 32" in ran.stderr
    assert "Traceback" not in ran.stderr


@pytest.mark.parametrize(
    ("address", "said"),
    [
        ("localhost:http", "--http takes [HOST:]PORT, not 'localhost:http'"),
        ("127.0.0.1:99999", "cannot listen on 127.0.0.1:99999"),
    ],
)
def test_a_bad_address_is_one_line(tmp_path, monkeypatch, capsys, address, said):
    monkeypatch.setenv("SCOUT_HOME", str(tmp_path))
    monkeypatch.setenv("SCOUT_MCP_TOKEN", TOKEN)
    assert main(["mcp", "--sim", "fresh-pair", "--http", address]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"scout mcp: {said}") and err.count("\n") == 1


def test_the_announced_address_already_accepts_connections():
    """A client connecting on the announcement waits in the backlog instead of being refused
    while uvicorn starts: the socket listens before the address is printed."""
    from agent.mcp.http_wire import bound_socket

    listening = bound_socket("127.0.0.1", 0)
    try:
        with socket.create_connection(listening.getsockname()[:2], timeout=5):
            pass
    finally:
        listening.close()
