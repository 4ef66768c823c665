"""A loopback port nothing listens on, held for as long as a test needs it.

Binding a probe socket to port 0, closing it and then using the number is a race: once the probe
is closed, any process on the machine (another test's server, an outgoing connection's ephemeral
port) may take the port, and the "closed" port answers. A socket that stays bound without
listening keeps the port for the test: Linux refuses connections to it (RST, ECONNREFUSED) and
no other socket can bind it, SO_REUSEADDR or not, since the holder does not set it.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator


@contextlib.contextmanager
def held_closed_port(host: str = "127.0.0.1") -> Iterator[int]:
    """A port on `host` that refuses connections until the block ends."""
    with socket.socket() as holder:
        holder.bind((host, 0))
        yield holder.getsockname()[1]
