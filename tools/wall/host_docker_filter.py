"""What the wall's docker proxy passes: reads alone (host_docker_proxy.py starts it).

It passes a request to the daemon's unix socket only when it is a read, as Tecnativa's
docker-socket-proxy does with haproxy (github.com/Tecnativa/docker-socket-proxy, POST=0): the
call's token, GET or HEAD, a path on READ_ENDPOINTS (the Engine API reference,
docs.docker.com/reference/api/engine/), no body, no connection upgrade (attach and exec hijack
the connection; websockets), no stream that never ends (logs `follow`, stats without
`stream=false`, events without `until`), nothing that makes the daemon reach a registry.
Anything else gets a 403 whose JSON `message` says why: the docker client prints it as "Error
response from daemon: …". One request per connection (`Connection: close`), rebuilt from the
parsed parts, so nothing the filter did not judge reaches the daemon.

Imported only by the proxy's serving process, after the fork, while the call's client starts:
so it uses the interpreter's C modules (_socket, _thread) and parses paths, queries and JSON
itself, where re, json, socket, threading, hmac and urllib.parse would cost ~100 ms of a busy
host's CPU before the first answer. Standard library only, Python 3.8+: it runs on the host
(tools/wall/command.py ships it).
"""

from __future__ import annotations

import _socket
import _thread
from _operator import _compare_digest  # what hmac.compare_digest is, without hashlib

MAX_HEAD = 64 * 1024
# An API path (without its /vN.NN prefix) and the query rule it needs: "" none; follow,
# stream, until: see _stream_refusal. `{name}` is one segment (a container, network, volume
# or id), `{image}` one or more (registry/name:tag@digest), `a|b` one of the words.
READ_ENDPOINTS = (
    ("/_ping", ""), ("/version", ""), ("/info", ""), ("/system/df", ""),
    ("/events", "until"),
    ("/containers/json", ""),
    ("/containers/{name}/json|top|changes|archive", ""),
    ("/containers/{name}/logs", "follow"),
    ("/containers/{name}/stats", "stream"),
    ("/images/json", ""),
    ("/images/{image}/json|history", ""),
    ("/networks|volumes|plugins|services|tasks|nodes|configs|swarm", ""),
    ("/networks|volumes|services|tasks|nodes|configs/{name}", ""),
    ("/services|tasks/{name}/logs", "follow"),
    ("/exec|plugins/{name}/json", ""),
)  # fmt: skip
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_NAME_CHARS = _ALNUM | frozenset("_.@:-")
_TOKEN_CHARS = _ALNUM | frozenset("!#$%&'*+.^_`|~-")  # a header name (RFC 9110 token)
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade",
               "content-length", "transfer-encoding"}  # fmt: skip
_FALSE = {"", "0", "no", "false", "none"}  # what the daemon reads as false (httputils.BoolValue)
_REASONS = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}


def refusal(
    method: str, target: str, headers: list[tuple[str, str]], token: tuple[str, str]
) -> str | None:
    """Why this request may not reach the daemon, or None for a read it passes. `token`: the
    header the call's client sends (host_docker_proxy.py writes it in its config), its value."""
    named: dict[str, list[str]] = {}
    for name, value in headers:
        named.setdefault(name.lower(), []).append(value.strip())
    given = named.get(token[0].lower(), [])
    if not any(_compare_digest(value.encode(), token[1].encode()) for value in given):
        return "no token of this call: only the walled call's docker client may use this proxy"
    if method not in ("GET", "HEAD"):
        return f"{method} changes the daemon's state; only reads (GET, HEAD) pass"
    if "upgrade" in named or any("upgrade" in v.lower() for v in named.get("connection", [])):
        return "connection upgrades (attach, exec, websockets) are refused"
    if "transfer-encoding" in named or any(v != "0" for v in named.get("content-length", [])):
        return "a request body is refused"
    path, _, query = target.partition("?")
    segments = path[1:].split("/")
    odd = [c for c in "%\\" if c in path] + [c for c in "#;" if c in target]
    if not path.startswith("/") or odd or any(s in ("", ".", "..") for s in segments):
        return f"{_quoted(target)} is not a plain API path"
    if _is_version(segments[0]):
        segments = segments[1:]
    bare = "/" + "/".join(segments)
    rule = next((r for p, r in READ_ENDPOINTS if _matches(p[1:].split("/"), segments)), None)
    if rule is None:
        return f"{method} {_quoted(bare)} is not on the read-only proxy's list of read endpoints"
    return _stream_refusal(rule, query)


def _is_version(segment: str) -> bool:
    major, dot, minor = segment[1:].partition(".")
    return segment[:1] == "v" and bool(dot) and major.isdigit() and minor.isdigit()


def _is_name(segment: str) -> bool:
    return segment[:1] in _ALNUM and set(segment) <= _NAME_CHARS


def _matches(pattern: list[str], segments: list[str]) -> bool:
    """Whether the path's segments fit the endpoint's pattern (see READ_ENDPOINTS)."""
    if not pattern:
        return not segments
    head, rest = pattern[0], pattern[1:]
    if head == "{image}":  # one or more name segments, then the rest
        return any(
            all(_is_name(s) for s in segments[:taken]) and _matches(rest, segments[taken:])
            for taken in range(1, len(segments) - len(rest) + 1)
        )
    if not segments:
        return False
    fits = _is_name(segments[0]) if head == "{name}" else segments[0] in head.split("|")
    return fits and _matches(rest, segments[1:])


def _stream_refusal(rule: str, query: str) -> str | None:
    """A read that would never end (a follow, a stream, events with no end) is refused."""
    values = _query(query)
    if values is None:
        return "a query the proxy cannot read as the daemon would (a bad %-escape)"
    if rule == "follow" and any(v.strip().lower() not in _FALSE for v in values.get("follow", [])):
        return "following logs never ends; ask for them without --follow"
    if rule == "stream" and not (
        values.get("stream") and all(v.strip().lower() in _FALSE for v in values["stream"])
    ):
        return "a stats stream never ends; ask for one sample (--no-stream)"
    if rule == "until" and not any(v.strip() for v in values.get("until", [])):
        return "events without --until never end; give --until"
    return None


def _query(query: str) -> dict[str, list[str]] | None:
    """The query's keys to their values, decoded as Go's url.ParseQuery does ('+' is a space,
    %XX a byte); None where an escape is malformed."""
    found: dict[str, list[str]] = {}
    for pair in query.split("&") if query else []:
        key, _, value = pair.partition("=")
        decoded = [_unescape(key), _unescape(value)]
        if decoded[0] is None or decoded[1] is None:
            return None
        found.setdefault(decoded[0], []).append(decoded[1])
    return found


def _unescape(text: str) -> str | None:
    pieces = text.replace("+", " ").split("%")
    out = bytearray(pieces[0].encode("latin-1", "replace"))
    for piece in pieces[1:]:
        if len(piece) < 2 or not all(c in "0123456789abcdefABCDEF" for c in piece[:2]):
            return None
        out.append(int(piece[:2], 16))
        out += piece[2:].encode("latin-1", "replace")
    return out.decode("utf-8", "replace")


def _quoted(text: str) -> str:
    """`text` in quotes with anything unprintable escaped, as a reason may show it."""
    return "'" + "".join(c if " " <= c < "\x7f" else f"\\x{ord(c):02x}" for c in text) + "'"


def serve(listener_fd: int, upstream: str | None, why_not: str, token: tuple[str, str]) -> None:
    """Answer connections on the listening socket until the helper kills this process."""
    listener = _socket.socket(fileno=listener_fd)
    while True:
        client_fd, _ = listener._accept()
        client = _socket.socket(fileno=client_fd)
        _thread.start_new_thread(_one_request, (client, upstream, why_not, token))


def _one_request(
    client: _socket.socket, upstream: str | None, why_not: str, token: tuple[str, str]
) -> None:
    """Judge one request; refuse it, or send it rebuilt to the daemon and relay the answer."""
    try:
        client.settimeout(30)
        _judge_and_relay(client, upstream, why_not, token)
    except OSError:  # either side went away: the answer ends there
        pass
    finally:
        client.close()


def _judge_and_relay(
    client: _socket.socket, upstream: str | None, why_not: str, token: tuple[str, str]
) -> None:
    try:
        method, target, headers = _read_head(client)
    except ValueError as exc:
        return _answer(client, 400, f"unreadable request: {exc}")
    why = refusal(method, target, headers, token)
    if why is not None:
        return _answer(client, 403, f"refused by the wall's read-only docker proxy: {why}")
    if upstream is None:
        return _answer(client, 502, why_not)
    dropped = {*_HOP_BY_HOP, token[0].lower()}  # the token is for the proxy alone
    kept = [(n, v) for n, v in headers if n.lower() not in dropped]
    if not any(n.lower() == "host" for n, _ in kept):
        kept.append(("Host", "docker"))
    head = f"{method} {target} HTTP/1.1\r\n"
    head += "".join(f"{n}: {v}\r\n" for n, v in kept) + "Connection: close\r\n\r\n"
    daemon = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        try:
            daemon.connect(upstream)
        except OSError as exc:
            why = f"cannot reach the docker daemon at {upstream}: {exc.strerror or exc}"
            return _answer(client, 502, why)
        daemon.sendall(head.encode("latin-1"))
        client.settimeout(None)
        while True:
            data = daemon.recv(65536)
            if not data:
                return None
            client.sendall(data)
    finally:
        daemon.close()


def _read_head(client: _socket.socket) -> tuple[str, str, list[tuple[str, str]]]:
    """The request line and headers; bytes after them (a body, a pipelined request) are never
    read on, so never sent."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(4096)
        if not chunk or len(data) > MAX_HEAD:
            raise ValueError("no complete request head")
        data += chunk
    lines = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or parts[2] not in ("HTTP/1.0", "HTTP/1.1"):
        raise ValueError("not an HTTP/1.x request line")
    headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or not set(name) <= _TOKEN_CHARS:
            raise ValueError(f"malformed header line {_quoted(line[:40])}")
        if "\r" in value or "\n" in value or "\0" in value:
            raise ValueError("control characters in a header")
        headers.append((name, value.strip()))
    return parts[0], parts[1], headers


def _answer(client: _socket.socket, status: int, message: str) -> None:
    """A JSON error as the daemon gives one ({"message": …}); the message is printable ASCII
    but for what _quoted escaped, so only quotes and backslashes need escaping."""
    text = "".join(
        c if " " <= c < "\x7f" and c not in '"\\' else f"\\u{ord(c):04x}" for c in message
    )
    body = ('{"message": "' + text + '"}').encode()
    head = f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Type: application/json\r\n"
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    client.sendall(head.encode() + body)
