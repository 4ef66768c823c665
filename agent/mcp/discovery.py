"""`server/discover` answered before the MCP SDK loads: the SDK's own answer, written down.

Importing the SDK (`mcp`, `mcp_types`) takes most of a second, and a host waits on `scout mcp`'s
first answer. That answer is fixed by what Scout registers (agent/mcp/server.py) and by the SDK
version, so it is computed once, with the SDK, into discovery.json (`python -m
agent.mcp.discovery` writes it) and read back at start: `scout mcp` reads the client's first
line, and if it is a `server/discover` at a protocol version the file holds, under the SDK
version that wrote it, writes the SDK's answer (the serverInfo stamp carrying this Scout's
version) and only then imports the SDK. Anything else (another method, another version, another
SDK) is left to the SDK, which reads it first: the early answer never says what the SDK would
not (tests/unit/test_discovery.py compares the two).
"""

from __future__ import annotations

import io
import json
import os
import sys
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

DESCRIPTION = Path(__file__).with_name("discovery.json")
PROTOCOL_KEY = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
#: a first line longer than this is no discovery request; the SDK reads it
FIRST_LINE_LIMIT = 64 * 1024


@dataclass
class Opening:
    """What came of the client's first line: `unread` is what the SDK must still read first
    (all of it when the line was left to the SDK), `answered` whether discovery was answered."""

    unread: bytes
    answered: bool

    def rest_of_wire(self, fd_in: int = 0) -> io.TextIOWrapper:
        """The client's stream for the SDK: what was read past the answer, then `fd_in`
        itself, from a private copy. `fd_in` then reads the null device, as the SDK's own
        claim of stdin leaves it, so no child process reads the wire."""
        private = os.dup(fd_in)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, fd_in)
        os.close(null)
        raw = _Resumed(self.unread, private)
        return io.TextIOWrapper(io.BufferedReader(raw), encoding="utf-8", errors="replace")


class _Resumed(io.RawIOBase):
    """Bytes already read, then a descriptor: the wire as if nothing had been read off it."""

    def __init__(self, unread: bytes, fd: int):
        super().__init__()
        self._unread = unread
        self._fd = fd

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._unread:
            size = min(len(buffer), len(self._unread))
            buffer[:size] = self._unread[:size]
            self._unread = self._unread[size:]
            return size
        data = os.read(self._fd, len(buffer))
        buffer[: len(data)] = data
        return len(data)


def sdk_version() -> str | None:
    try:
        return version("mcp")
    except PackageNotFoundError:
        return None


def early_answer(line: bytes, scout_version: str) -> bytes | None:
    """The SDK's answer to `line`, when it is a discovery request the description covers."""
    try:
        request = json.loads(line)
        described = json.loads(DESCRIPTION.read_text())
    except (ValueError, OSError):
        return None
    if not isinstance(request, dict) or request.get("method") != "server/discover":
        return None
    if request.get("jsonrpc") != "2.0" or set(request) != {"jsonrpc", "id", "method", "params"}:
        return None
    params = request.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or set(params) != {"_meta"} or not _plain_envelope(meta):
        return None
    result = described["results"].get(meta[PROTOCOL_KEY])
    request_id = request.get("id")
    if result is None or described["sdk"] != sdk_version():
        return None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    result["_meta"][SERVER_INFO_KEY]["version"] = scout_version
    answer = {"jsonrpc": "2.0", "id": request_id, "result": result}
    return json.dumps(answer, separators=(",", ":")).encode() + b"\n"


def _plain_envelope(meta: dict[str, Any]) -> bool:
    """The envelope the SDK's clients send: a version string, capabilities, and at most a
    name and version for the client (anything odder is the SDK's to judge)."""
    info = meta.get(CLIENT_INFO_KEY, {"name": "", "version": ""})
    return (
        set(meta) <= {PROTOCOL_KEY, CAPABILITIES_KEY, CLIENT_INFO_KEY}
        and isinstance(meta.get(PROTOCOL_KEY), str)
        and _plain_capabilities(meta.get(CAPABILITIES_KEY))
        and isinstance(info, dict)
        and set(info) == {"name", "version"}
        and all(isinstance(value, str) for value in info.values())
    )


def _plain_capabilities(value: Any) -> bool:
    """Capabilities made of objects alone, but for `listChanged` flags: what the SDK's clients
    declare. A value of any other kind is left to the SDK's own validation."""
    if not isinstance(value, dict):
        return False
    return all(
        isinstance(inner, bool) if key == "listChanged" else _plain_capabilities(inner)
        for key, inner in value.items()
    )


def open_wire(fd_in: int, fd_out: int, scout_version: str) -> Opening:
    """Read the client's first line from `fd_in` and answer it on `fd_out` if it is discovery.

    Reads the descriptor itself (no buffered reader may keep what the SDK needs); returns at
    end of input or once a line is in, with what follows it still to be read by the SDK."""
    read = b""
    while b"\n" not in read and len(read) < FIRST_LINE_LIMIT:
        chunk = os.read(fd_in, FIRST_LINE_LIMIT)
        if not chunk:
            return Opening(read, answered=False)
        read += chunk
    line, _, rest = read.partition(b"\n")
    answer = early_answer(line, scout_version) if b"\n" in read else None
    if answer is None:
        return Opening(read, answered=False)
    written = 0
    while written < len(answer):
        written += os.write(fd_out, answer[written:])
    return Opening(rest, answered=True)


async def sdk_answer(line: bytes, scout_version: str) -> dict[str, Any]:
    """What the SDK itself answers to `line`: Scout's server run by the SDK over in-memory
    streams, the answer dumped as the SDK's stdio transport writes it."""
    import anyio
    from mcp import types
    from mcp.shared.message import SessionMessage

    from agent.mcp.bridge import ScoutBridge
    from agent.mcp.server import build_server

    def never_opened() -> Any:
        raise AssertionError("discovery opened the session")

    server = build_server(ScoutBridge(never_opened, principal="discovery"), scout_version)
    to_server, server_reads = anyio.create_memory_object_stream[Any](1)
    server_writes, from_server = anyio.create_memory_object_stream[Any](1)
    async with anyio.create_task_group() as group:
        options = server.create_initialization_options()
        group.start_soon(server.run, server_reads, server_writes, options)
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        await to_server.send(SessionMessage(message))
        reply = await from_server.receive()
        await to_server.aclose()
    return json.loads(reply.message.model_dump_json(by_alias=True, exclude_unset=True))


def discovery_request(protocol: str, request_id: int | str = 1) -> bytes:
    """A discovery request as the SDK's client sends it (less the client's name)."""
    meta = {PROTOCOL_KEY: protocol, CAPABILITIES_KEY: {}}
    request = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "server/discover",
        "params": {"_meta": meta},
    }
    return json.dumps(request).encode()


def write_description() -> Path:
    """Write discovery.json from the installed SDK, at every modern version it serves."""
    import asyncio

    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    results = {
        v: asyncio.run(sdk_answer(discovery_request(v), ""))["result"]
        for v in MODERN_PROTOCOL_VERSIONS
    }
    described = {"sdk": sdk_version(), "results": results}
    DESCRIPTION.write_text(json.dumps(described, indent=1, sort_keys=True) + "\n")
    return DESCRIPTION


if __name__ == "__main__":
    print(f"wrote {write_description()}", file=sys.stderr)
