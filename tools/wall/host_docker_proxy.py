"""The wall's door to docker, on the host: a read-only Docker Engine API proxy for one call.

Docker's socket is the whole daemon's power (a POST to it is root), so the wall closes it
(no socket(AF_UNIX), host_seccomp.py). A walled call that uses the docker client instead gets
this proxy: the helper binds a loopback TCP port before it builds the wall, forks the proxy
outside the wall, names the port among the call's ports (Landlock and the address filter let
the call reach it and nothing else new) and points the client at it: DOCKER_HOST, and a client
config (DOCKER_CONFIG) whose HttpHeaders carry a token made for this call, so no other local
process may use the port while it is open. The proxy passes a request to the daemon's unix
socket only when it is a read, as Tecnativa's docker-socket-proxy does with haproxy
(github.com/Tecnativa/docker-socket-proxy, POST=0): GET or HEAD, a path on READ_ENDPOINTS
(the Engine API reference, docs.docker.com/reference/api/engine/), no body, no connection
upgrade (attach and exec hijack the connection; websockets), no stream that never ends (logs
`follow`, stats without `stream=false`, events without `until`), nothing that makes the daemon
reach a registry. Anything else gets a 403 whose JSON `message` says why: the docker client
prints it as "Error response from daemon: …". One request per connection (`Connection:
close`), rebuilt from the parsed parts, so nothing the proxy did not judge reaches the daemon.

The proxy runs with the helper's rights: it reaches the socket only where the caller could.

Standard library only, Python 3.8+: it runs on the host (tools/wall/command.py ships it).
"""

from __future__ import annotations

import json
import os
import re
import socket

DEFAULT_SOCKET = "/var/run/docker.sock"
TOKEN_HEADER = "X-Scout-Wall-Token"
MAX_HEAD = 64 * 1024
PR_SET_PDEATHSIG, SIGKILL = 1, 9
_NAME = r"[A-Za-z0-9][A-Za-z0-9_.@:-]*"  # a container, network or volume name, or an id
_IMAGE = r"[A-Za-z0-9][A-Za-z0-9_.@:/-]*"  # an image reference: registry/name:tag@digest
# path (without the /vN.NN prefix) -> the query rule it needs: "" none, or one of _STREAMS'
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
               "content-length", "transfer-encoding", TOKEN_HEADER.lower()}  # fmt: skip
_FALSE = {"", "0", "no", "false", "none"}  # what the daemon reads as false (httputils.BoolValue)


class Proxy:
    """A started proxy: the port the call connects to, its token, the serving process."""

    def __init__(self, port: int, token: str, pid: int) -> None:
        self.port, self.token, self.pid = port, token, pid


def upstream_socket(environ: dict[str, str]) -> tuple[str | None, str]:
    """The daemon's unix socket (DOCKER_HOST's where it names one, else docker's default), or
    None and why: a TCP or SSH daemon is no socket this proxy reaches."""
    host = environ.get("DOCKER_HOST") or f"unix://{DEFAULT_SOCKET}"
    if host.startswith("unix://"):
        return host[len("unix://") :], ""
    return None, f"DOCKER_HOST={host} is not a unix socket, the only kind the proxy reaches"


def refusal(method: str, target: str, headers: list[tuple[str, str]], token: str) -> str | None:
    """Why this request may not reach the daemon, or None for a read it passes."""
    import hmac  # here: only the serving process pays for it

    named = {}
    for name, value in headers:
        named.setdefault(name.lower(), []).append(value.strip())
    if not any(hmac.compare_digest(given, token) for given in named.get(TOKEN_HEADER.lower(), [])):
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
    from urllib.parse import parse_qs

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


def start(upstream: str | None, why_not: str) -> Proxy:
    """Bind a loopback port, fork the serving process (killed with the helper), return it."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    token = os.urandom(16).hex()
    pid = os.fork()
    if pid == 0:
        try:
            import ctypes

            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
            quiet = os.open(os.devnull, os.O_RDWR)  # nothing of its own in the call's output
            for fd in (0, 1, 2):
                os.dup2(quiet, fd)
            _serve(listener, upstream, why_not, token)
        finally:
            os._exit(0)
    port = listener.getsockname()[1]
    listener.close()
    return Proxy(port, token, pid)


def point_client(proxy: Proxy, environ: os._Environ[str], folder: str) -> None:
    """Point the call's docker client at the proxy: DOCKER_HOST, and a config in `folder`
    whose HttpHeaders carry the token; a context or TLS setting would send it elsewhere."""
    config = os.path.join(folder, "docker-config")
    os.mkdir(config, 0o700)
    with open(os.path.join(config, "config.json"), "w") as f:
        json.dump({"HttpHeaders": {TOKEN_HEADER: proxy.token}}, f)
    for name in ("DOCKER_CONTEXT", "DOCKER_TLS", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH"):
        environ.pop(name, None)
    environ["DOCKER_HOST"] = f"tcp://127.0.0.1:{proxy.port}"
    environ["DOCKER_CONFIG"] = config


def stop(proxy: Proxy) -> None:
    try:
        os.kill(proxy.pid, SIGKILL)
        os.waitpid(proxy.pid, 0)
    except OSError:
        pass


def _serve(listener: socket.socket, upstream: str | None, why_not: str, token: str) -> None:
    import threading

    while True:
        client, _ = listener.accept()
        threading.Thread(
            target=_one_request, args=(client, upstream, why_not, token), daemon=True
        ).start()


def _one_request(client: socket.socket, upstream: str | None, why_not: str, token: str) -> None:
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
        kept = [(n, v) for n, v in headers if n.lower() not in _HOP_BY_HOP]
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
