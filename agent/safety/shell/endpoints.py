"""Where a read goes: only loopback and the inventory's hosts, and on serving ports only reads.

A read whose endpoint an option or a variable chooses (`docker -H`, `kubectl -s`, `HF_ENDPOINT`,
a proxy, a curl URL) carries ambient credentials (docker's registry auths, kubeconfig tokens, the
HF token) to that endpoint; it is read-only only when the endpoint is a literal loopback address
or a host the inventory names (`INVENTORY`, set by whoever builds the judge). An HTTP GET is not
harmless by itself on serving stacks (Ray's dashboard kills actors on GET), so on their ports
only an allow-list of read endpoints is read-only.
"""

from __future__ import annotations

import ipaddress
import re
from contextvars import ContextVar
from urllib.parse import urlsplit

INVENTORY: ContextVar[frozenset[str]] = ContextVar("INVENTORY", default=frozenset())
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
LOCAL_SOCKETS = frozenset(
    {"unix:///var/run/docker.sock", "unix:///run/docker.sock", "unix:///run/containerd/containerd.sock",
     "/run/containerd/containerd.sock", "unix:///run/crio/crio.sock", "/var/run/docker.sock"}
)  # fmt: skip
# Ray dashboard, Ray's agent, vLLM / OpenAI-compatible servers, SGLang, Triton, TGI.
SERVING_PORTS = frozenset({8265, 52365, 8000, 8001, 8080, 30000, 8002, 3000})
READ_PATHS = frozenset(
    {"/", "/health", "/healthz", "/health_generate", "/ping", "/ready", "/live", "/version",
     "/metrics", "/v1/models", "/v1/health", "/get_model_info", "/get_server_info",
     "/server_info", "/api/version", "/api/cluster_status", "/api/jobs", "/api/jobs/",
     "/api/v0/nodes", "/api/v0/actors", "/api/v0/tasks", "/api/v0/jobs", "/api/v0/placement_groups",
     "/nodes", "/info", "/v2/health/ready", "/v2/health/live", "/v2/models", "/openapi.json",
     "/docs"}
)  # fmt: skip
SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def host_of(url: str) -> str | None:
    """The host a URL or `host[:port]` names (None when it cannot be read)."""
    text = url if SCHEME_RE.match(url) else f"http://{url}"
    try:
        parts = urlsplit(text)
        return parts.hostname
    except ValueError:
        return None


def is_loopback_host(host: str | None) -> bool:
    if host is None:
        return False
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified  # connecting to 0.0.0.0 is this host


def is_known_host(host: str | None) -> bool:
    """A literal loopback address or a host the inventory names."""
    return is_loopback_host(host) or (host is not None and host in INVENTORY.get())


def is_loopback_url(value: str) -> bool:
    """`unix:///var/run/docker.sock`, `tcp://127.0.0.1:2375`, `http://localhost:8080`."""
    if value in LOCAL_SOCKETS:
        return True
    if value.startswith(("unix://", "npipe://", "ssh://")):
        return False
    return "@" not in value and is_loopback_host(host_of(value))


def endpoint_problem(value: str, what: str) -> str | None:
    """Why sending a read (and its credentials) to `value` is not read-only, or None."""
    if value in LOCAL_SOCKETS:
        return None
    host = host_of(value) if not value.startswith(("unix://", "npipe://", "ssh://")) else None
    if "@" not in value and is_known_host(host):
        return None
    return (
        f"{what} {value}, neither loopback nor an inventory host (its credentials would go there)"
    )


def url_problem(url: str) -> str | None:
    """Why a GET of `url` is not read-only: another host, or a serving port's non-read path."""
    text = url if SCHEME_RE.match(url) else f"http://{url}"
    try:
        parts = urlsplit(text)
        host, port = parts.hostname, parts.port
    except ValueError:
        return f"could not read the URL {url}"
    if parts.username is not None or not is_known_host(host):
        return f"goes to {host or url}, neither loopback nor an inventory host"
    default = 443 if parts.scheme == "https" else 80
    path = re.sub(r"/{2,}", "/", parts.path or "/")
    if (port or default) in SERVING_PORTS and path not in READ_PATHS:
        return f"calls {path} on a serving port ({port}), which is not a known read endpoint"
    return None
