"""The bytes a fake tool's client and its host's tool server exchange over a Unix socket.

Request (client → server), one frame, sent together with the client's open standard streams as
SCM_RIGHTS descriptors: a 4-byte big-endian length, then NUL-separated fields
`version, tool, cwd, streams, argc, *args, *env`. `streams` names which of 0/1/2 were passed
(a closed stdin stays closed). While the tool runs, the client may send `k<signal>\\n` lines:
signals it received, for the server to pass on. The server answers once, `x<exit code>\\n` or
`s<signal>\\n`, and closes. A client that disappears before the answer has been killed: the
server kills the tool it was running.

Where a request comes from: the simulator and unconfined clients connect to the server's socket
(HOST_DIR/run/tools.sock). A confined command may not create sockets (seccomp.py), so its
clients make a socketpair() and hand one end to the server over BROKER_FD, a seqpacket socket
the server gave the command before confining it; that end then carries the request as above.
The tool LAUNCH starts a command in the host's sandbox (`args` = sandbox/launch's arguments,
its streams the command's); only the server's socket may ask for it.

Only builtins are used here: the client imports this module on every fake command.
"""

from __future__ import annotations

VERSION = b"1"
SOCKET_DIR = "run"
SOCKET_NAME = "tools.sock"
HEADER_BYTES = 4
MAX_REQUEST_BYTES = 4 * 1024 * 1024
STD_STREAMS = (0, 1, 2)
BROKER_FD = 1000  # above what shells use for their own descriptors (bash: 10 and up, 255)
LAUNCH = "@launch"
CONFINED_ENV = "SCOUT_SIM_CONFINED"  # "1" in a command the server could confine


class WireError(Exception):
    """A frame that does not follow the format above."""


def encode_request(
    tool: str, cwd: bytes, streams: bytes, args: list[bytes], env: list[bytes]
) -> bytes:
    fields = [VERSION, tool.encode(), cwd, streams, str(len(args)).encode(), *args, *env]
    body = b"\0".join(fields)
    return len(body).to_bytes(HEADER_BYTES, "big") + body


def request_length(header: bytes) -> int:
    length = int.from_bytes(header[:HEADER_BYTES], "big")
    if length > MAX_REQUEST_BYTES:
        raise WireError(f"request of {length} bytes is over the {MAX_REQUEST_BYTES} limit")
    return length


def decode_request(body: bytes) -> tuple[str, bytes, bytes, list[bytes], list[bytes]]:
    """(tool, cwd, streams, args, env) from a request body (without its length header)."""
    fields = body.split(b"\0")
    if len(fields) < 5 or fields[0] != VERSION:
        raise WireError("not a version-1 tool request")
    argc = int(fields[4])
    args, env = fields[5 : 5 + argc], fields[5 + argc :]
    if len(args) != argc:
        raise WireError("tool request with fewer arguments than it announced")
    return fields[1].decode(), fields[2], fields[3], args, env


def exit_reply(status: int) -> bytes:
    """`status` as os.waitpid reports it, as the one-line answer."""
    if status & 0x7F:  # killed by a signal
        return b"s%d\n" % (status & 0x7F)
    return b"x%d\n" % ((status >> 8) & 0xFF)
