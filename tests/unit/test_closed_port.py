"""The held closed port refuses connections, and no other socket can take it while it is held
(the race a bind-then-close probe leaves open)."""

from __future__ import annotations

import socket

import pytest

from tests.support.closed_port import held_closed_port


def test_a_held_closed_port_refuses_connections() -> None:
    with held_closed_port() as port, pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=60)


@pytest.mark.parametrize("reuse", [False, True], ids=["plain", "SO_REUSEADDR"])
def test_no_server_can_take_a_held_closed_port(reuse: bool) -> None:
    with held_closed_port() as port, socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, int(reuse))
        with pytest.raises(OSError, match="Address already in use"):
            server.bind(("127.0.0.1", port))
