"""Where a walled read may connect: only the TCP ports its own words name, on a literal
loopback or inventory address (`curl http://127.0.0.1:8000/health`, `ray status` to the local
GCS), and only to loopback and the inventory addresses it names. Nothing else gets a network
socket inside the wall (tools/wall/host_helper.py; the addresses: host_netfilter.py)."""

from __future__ import annotations

import ipaddress
import re
import shlex
from collections.abc import Collection, Mapping

RAY_GCS_PORT = 6379  # ray start --head's default --port (docs.ray.io, "ray start")
_URL = re.compile(
    r"\A(?P<scheme>https?://)?(?P<host>\[[0-9a-fA-F:]+\]|[^/:?#@\s]+)(:(?P<port>\d{1,5}))?([/?#]|\Z)"
)
_LOOPBACK = re.compile(r"\A(127(\.\d{1,3}){3}|\[::1\]|localhost)\Z")


def needed_ports(command: str, addresses: Collection[str] = ()) -> tuple[int, ...]:
    """TCP ports the command's words name on a literal loopback or inventory address."""
    try:
        words = shlex.split(command)
    except ValueError:
        return ()
    ports: set[int] = set()
    for index, word in enumerate(words):
        if word == "ray" and words[index + 1 : index + 2] == ["status"]:
            ports.add(RAY_GCS_PORT)
        url = _URL.match(word)
        if url is None or not (url["scheme"] or url["port"]):  # a URL, or HOST:PORT (curl's)
            continue
        if _LOOPBACK.match(url["host"]) or url["host"] in addresses:
            default = 443 if word.startswith("https") else 80
            ports.add(int(url["port"] or default))
    return tuple(sorted(port for port in ports if 0 < port < 65536))


def needed_addresses(command: str, inventory: Mapping[str, str]) -> tuple[str, ...]:
    """The IP addresses of the inventory hosts the command's URLs name (`inventory`: a host's
    name or address to its address); loopback is always reachable and needs none."""
    try:
        words = shlex.split(command)
    except ValueError:
        return ()
    found: set[str] = set()
    for word in words:
        url = _URL.match(word)
        if url is None or not (url["scheme"] or url["port"]):
            continue
        address = inventory.get(url["host"].strip("[]"), inventory.get(url["host"], ""))
        try:
            found.add(str(ipaddress.ip_address(address)))
        except ValueError:
            continue  # a name the inventory does not give as an address: not reachable
    return tuple(sorted(found))
