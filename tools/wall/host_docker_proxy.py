"""The wall's door to docker, on the host: a read-only Docker Engine API proxy for one call.

Docker's socket is the whole daemon's power (a POST to it is root), so the wall closes it
(no socket(AF_UNIX), host_seccomp.py). A walled call that uses the docker client instead gets
a proxy: the helper binds a loopback TCP port before it builds the wall, forks the proxy
outside the wall, names the port among the call's ports (Landlock and the address filter let
the call reach it and nothing else new) and points the client at it: DOCKER_HOST, and a client
config (DOCKER_CONFIG) whose HttpHeaders carry a token made for this call, so no other local
process may use the port while it is open. What the proxy passes is host_docker_filter.py's
judgement: reads alone. The proxy runs with the helper's rights: it reaches the socket only
where the caller could.

This module is what the helper runs before the command starts, so it imports nothing but os
and host_proxy_process.py, which binds and forks with os and _socket alone (the serving process
imports the filter after the fork, off the call's path).

Standard library only, Python 3.8+: it runs on the host (tools/wall/command.py ships it).
"""

from __future__ import annotations

import os
from types import ModuleType  # the helper's ctypes imported it already

if __package__:  # inside Scout's tree
    from tools.wall import host_proxy_process
else:  # on a host: the sibling file in the helper's folder, which the launch line put first
    # on sys.path. __import__, as host_helper.py loads its siblings: an import statement naming
    # it would read as a third-party package (tests/unit/test_dependency_range.py)
    host_proxy_process = __import__("host_proxy_process")

DEFAULT_SOCKET = "/var/run/docker.sock"
TOKEN_HEADER = "X-Scout-Wall-Token"


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


def start(upstream: str | None, why_not: str) -> Proxy:
    """Bind a loopback port, fork the serving process (killed with the helper), return it."""
    token = os.urandom(16).hex()
    port, pid = host_proxy_process.fork_server(
        lambda fd: _filter().serve(fd, upstream, why_not, (TOKEN_HEADER, token))
    )
    return Proxy(port, token, pid)


def _filter() -> ModuleType:
    """host_docker_filter: imported only by the serving process, after the fork."""
    if __package__:
        from tools.wall import host_docker_filter

        return host_docker_filter
    return __import__("host_docker_filter")


def point_client(proxy: Proxy, environ: os._Environ[str], folder: str) -> None:
    """Point the call's docker client at the proxy: DOCKER_HOST, and a config in `folder`
    whose HttpHeaders carry the token; a context or TLS setting would send it elsewhere."""
    config = os.path.join(folder, "docker-config")
    os.mkdir(config, 0o700)
    with open(os.path.join(config, "config.json"), "w") as f:  # the token is hex: no escapes
        f.write(f'{{"HttpHeaders": {{"{TOKEN_HEADER}": "{proxy.token}"}}}}\n')
    for name in ("DOCKER_CONTEXT", "DOCKER_TLS", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH"):
        environ.pop(name, None)
    environ["DOCKER_HOST"] = f"tcp://127.0.0.1:{proxy.port}"
    environ["DOCKER_CONFIG"] = config


def stop(proxy: Proxy) -> None:
    host_proxy_process.stop_server(proxy.pid)
