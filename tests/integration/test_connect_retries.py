"""A refused connection is final, as for `ssh`: one try, not three; a dropped one is retried."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncssh
import pytest

from tools.ssh import HostUnreachableError, Inventory, SSHPool


def _inventory(port: int) -> Inventory:
    return Inventory.from_dict({"hosts": {"a": {"address": "127.0.0.1", "port": port}}})


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The port of every connection the pool tries, through the real asyncssh.connect."""
    tried: list[int] = []
    real = asyncssh.connect

    async def counted(host: str, port: int, **options: Any) -> asyncssh.SSHClientConnection:
        tried.append(port)
        return await real(host, port, **options)

    monkeypatch.setattr(asyncssh, "connect", counted)
    return tried


async def test_a_refused_connection_is_tried_once(connects: list[int], closed_port: int) -> None:
    port = closed_port
    async with SSHPool(_inventory(port), connect_attempts=3) as pool:
        with pytest.raises(HostUnreachableError) as caught:
            await pool.run("a", "true")
    assert "Connection refused" in str(caught.value)
    assert connects == [port]


async def test_a_dropped_connection_is_retried(connects: list[int]) -> None:
    """A server that accepts and hangs up at once (sshd's MaxStartups drop) may answer next time."""

    async def hang_up(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server, SSHPool(_inventory(port), connect_attempts=3) as pool:
        with pytest.raises(HostUnreachableError):
            await pool.run("a", "true")
    assert connects == [port, port, port]
