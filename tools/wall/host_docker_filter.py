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

Imported only by the proxy's serving process, after the fork. Standard library only, Python
3.8+: it runs on the host (tools/wall/command.py ships it).
"""

from __future__ import annotations

import hmac
import json
import re
import socket
import threading
from urllib.parse import parse_qs

MAX_HEAD = 64 * 1024
_NAME = r"[A-Za-z0-9][A-Za-z0-9_.@:-]*"  # a container, network or volume name, or an id
_IMAGE = r"[A-Za-z0-9][A-Za-z0-9_.@:/-]*"  # an image reference: registry/name:tag@digest
# path (without the /vN.NN prefix) -> its query rule: "" none; follow, stream, until: see
# _stream_refusal
READ_ENDPOINTS = tuple(
    (re.compile(path), rule)
    for path, rule in (
        (r"/_ping|/version|/info|/system/df", ""),
        (r"/events", "until"),
        (r"/containers/json", ""),
        (rf"/containers/{_NAME}/(json|top|changes|archive)", ""),
        (rf"/containers/{_NAME}/logs", "follow"),
        (rf"/containers/{_NAME}/stats", "stream"),
        (r"/images/json", ""),
        (rf"/images/{_IMAGE}/(json|history)", ""),
        (rf"/(networks|volumes|plugins|services|tasks|nodes|configs)(/{_NAME})?", ""),
        (rf"/(services|tasks)/{_NAME}/logs", "follow"),
        (rf"/(exec|plugins)/{_NAME}/json", ""),
        (r"/swarm", ""),
    )
)
_VERSION = re.compile(r"/v\d{1,2}\.\d{1,3}(?=/)")
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade",
               "content-length", "transfer-encoding"}  # fmt: skip
_FALSE = {"", "0", "no", "false", "none"}  # what the daemon reads as false (httputils.BoolValue)


def refusal(
    method: str, target: str, headers: list[tuple[str, str]], token: tuple[str, str]
) -> str | None:
    """Why this request may not reach the daemon, or None for a read it passes. `token`: the
    header the call's client sends (host_docker_proxy.py writes it in its config), its value."""
    named = {}
    for name, value in headers:
        named.setdefault(name.lower(), []).append(value.strip())
    given = named.get(token[0].lower(), [])
    if not any(hmac.compare_digest(value, token[1]) for value in given):
        return "no token of this call: only the walled call's docker client may use this proxy"
    if method not in ("GET", "HEAD"):
        return f"{method} changes the daemon's state; only reads (GET, HEAD) pass"
    if "upgrade" in named or any("upgrade" in v.lower() for v in named.get("connection", [])):
        return "connection upgrades (attach, exec, websockets) are refused"
    if "transfer-encoding" in named or any(v != "0" for v in named.get("content-length", [])):
        return "a request body is refused"
    path, _, query = target.partition("?")
    odd = [c for c in "%\\" if c in path] + [c for c in "#;" if c in target]
    if not path.startswith("/") or odd or any(s in ("", ".", "..") for s in path[1:].split("/")):
        return f"{target!r} is not a plain API path"
    bare = _VERSION.sub("", path, count=1)
    rule = next((rule for pattern, rule in READ_ENDPOINTS if pattern.fullmatch(bare)), None)
    if rule is None:
        return f"{method} {bare} is not on the read-only proxy's list of read endpoints"
    return _stream_refusal(rule, query)


def _stream_refusal(rule: str, query: str) -> str | None:
    """A read that would never end (a follow, a stream, events with no end) is refused."""
    values = parse_qs(query, keep_blank_values=True)
    if rule == "follow" and any(v.strip().lower() not in _FALSE for v in values.get("follow", [])):
        return "following logs never ends; ask for them without --follow"
    if rule == "stream" and not (
        values.get("stream") and all(v.strip().lower() in _FALSE for v in values["stream"])
    ):
        return "a stats stream never ends; ask for one sample (--no-stream)"
    if rule == "until" and not any(v.strip() for v in values.get("until", [])):
        return "events without --until never end; give --until"
    return None


def serve(listener_fd: int, upstream: str | None, why_not: str, token: tuple[str, str]) -> None:
    """Answer connections on the listening socket until the helper kills this process."""
    listener = socket.socket(fileno=listener_fd)
    while True:
        client, _ = listener.accept()
        threading.Thread(
            target=_one_request, args=(client, upstream, why_not, token), daemon=True
        ).start()


def _one_request(
    client: socket.socket, upstream: str | None, why_not: str, token: tuple[str, str]
) -> None:
    """Judge one request; refuse it, or send it rebuilt to the daemon and relay the answer."""
    with client:
        client.settimeout(30)
        try:
            parsed = _read_head(client)
        except (OSError, ValueError) as exc:
            return _answer(client, 400, f"unreadable request: {exc}")
        method, target, headers = parsed
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
        try:
            daemon = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            daemon.connect(upstream)
        except OSError as exc:
            return _answer(client, 502, f"cannot reach the docker daemon at {upstream}: {exc}")
        with daemon:
            try:
                daemon.sendall(head.encode("latin-1"))
                client.settimeout(None)
                while True:
                    data = daemon.recv(65536)
                    if not data:
                        return None
                    client.sendall(data)
            except OSError:  # either side went away: the answer ends there
                return None


def _read_head(client: socket.socket) -> tuple[str, str, list[tuple[str, str]]]:
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
        if not colon or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name):
            raise ValueError(f"malformed header line {line[:40]!r}")
        if "\r" in value or "\n" in value or "\0" in value:
            raise ValueError("control characters in a header")
        headers.append((name, value.strip()))
    return parts[0], parts[1], headers


def _answer(client: socket.socket, status: int, message: str) -> None:
    body = json.dumps({"message": message}).encode()
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    try:  # noqa: SIM105 - contextlib's imports cost more than the whole proxy
        client.sendall(head.encode() + body)
    except OSError:
        pass
