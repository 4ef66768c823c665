"""The address guard: web_fetch reads the public web, not the operator's own networks.

Every hop's host is resolved and each address is classified before anything connects; a host
with any off-limits address is refused unless the settings allow it by name or by network.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable

import httpx

from tools.web.errors import BadURLError, RefusedError, ResolveError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[list[str]]]

# Checked in order, so the most specific reason wins (metadata before link-local).
BLOCKED_NETWORKS: tuple[tuple[str, str], ...] = (
    ("169.254.169.254/32", "a cloud metadata address"),
    ("fd00:ec2::254/128", "a cloud metadata address"),
    ("0.0.0.0/32", "an unspecified address"),
    ("::/128", "an unspecified address"),
    ("0.0.0.0/8", "a 'this network' address"),
    ("127.0.0.0/8", "a loopback address"),
    ("::1/128", "a loopback address"),
    ("10.0.0.0/8", "a private address"),
    ("172.16.0.0/12", "a private address"),
    ("192.168.0.0/16", "a private address"),
    ("fc00::/7", "a private address"),
    ("100.64.0.0/10", "a shared (CGNAT) address"),
    ("169.254.0.0/16", "a link-local address"),
    ("fe80::/10", "a link-local address"),
    ("fec0::/10", "a site-local address"),
    ("224.0.0.0/4", "a multicast address"),
    ("ff00::/8", "a multicast address"),
    ("255.255.255.255/32", "a broadcast address"),
    ("64:ff9b:1::/48", "a local-use NAT64 address"),
)
_BLOCKED = tuple((ipaddress.ip_network(net), reason) for net, reason in BLOCKED_NETWORKS)
# IPv6 forms that carry an IPv4 address and reach it (translation, tunnels, legacy embedding).
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
_COMPATIBLE = ipaddress.ip_network("::/96")


def classify(address: IPAddress) -> str | None:
    """Why `address` is off limits ("a private address"), or None when it is public."""
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        inner, form = embedded
        reason = classify(inner)
        if reason is not None:
            return f"{reason} ({inner} inside {form})"
    for network, reason in _BLOCKED:
        if address.version == network.version and address in network:
            return reason
    if not address.is_global:
        return "a reserved address"
    return None


def _embedded_ipv4(address: IPAddress) -> tuple[ipaddress.IPv4Address, str] | None:
    """The IPv4 address an IPv6 address stands for, and the form that carries it: mapped
    (::ffff:a.b.c.d), translated (::ffff:0:a.b.c.d), compatible (::a.b.c.d), NAT64
    (64:ff9b::a.b.c.d), 6to4 (2002:aabb:ccdd::) or Teredo (the client's address)."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped, "an IPv4-mapped address"
    if address in _TRANSLATED:
        return low32, "an IPv4-translated address"
    if address in _COMPATIBLE and int(address) > 1:  # :: and ::1 are what they are
        return low32, "an IPv4-compatible address"
    if address in _NAT64:
        return low32, "a NAT64 address"
    if address.sixtofour is not None:
        return address.sixtofour, "a 6to4 address"
    if address.teredo is not None:
        return address.teredo[1], "a Teredo address"
    return None


async def system_resolve(host: str, port: int) -> list[str]:
    """getaddrinfo, run in the loop's thread pool so the event loop never blocks on DNS."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class AddressGuard:
    """Resolves a URL's host and says which addresses may be connected to, or refuses."""

    def __init__(self, allowed_hosts: Iterable[str] = (), resolve: Resolver = system_resolve):
        self._allowed_names: set[str] = set()
        self._allowed_networks: list[IPNetwork] = []
        for entry in allowed_hosts:
            try:
                self._allowed_networks.append(ipaddress.ip_network(entry.strip(), strict=False))
            except ValueError:
                self._allowed_names.add(entry.strip().lower().rstrip("."))
        self._resolve = resolve

    def _allowed(self, address: IPAddress) -> bool:
        return any(
            address.version == net.version and address in net for net in self._allowed_networks
        )

    async def check(self, url: httpx.URL) -> list[IPAddress]:
        """The addresses of `url`'s host that may be connected to, in resolver order.

        Raises RefusedError naming the address and why, before any connection is made.
        """
        if url.scheme not in ("http", "https"):
            raise BadURLError(f"only http and https URLs can be fetched, not {url.scheme}:")
        host = url.raw_host.decode("ascii").lower().rstrip(".")
        if not host:
            raise BadURLError(f"{url} has no host name")
        try:
            literal: IPAddress | None = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        addresses = [literal] if literal else await self._lookup(host, url.port or _port(url))
        if host in self._allowed_names:
            return addresses
        for address in addresses:
            reason = classify(address)
            if reason is None or self._allowed(address):
                continue
            if literal is not None:
                raise RefusedError(
                    f"refused: {address} is {reason}; allow it in settings if you really mean it"
                )
            raise RefusedError(
                f"refused: {host} resolves to {address}, {reason}; allow the host in settings "
                "if you really mean it"
            )
        return addresses

    async def _lookup(self, host: str, port: int) -> list[IPAddress]:
        try:
            found = await self._resolve(host, port)
        except (socket.gaierror, UnicodeError) as exc:
            raise ResolveError(
                f"could not resolve host {host!r} ({_reason(exc)}); check the spelling of the URL"
            ) from None
        if not found:
            raise ResolveError(f"could not resolve host {host!r}: no addresses")
        # A scoped IPv6 address ("fe80::1%eth0") keeps its zone out of the classification.
        return [ipaddress.ip_address(addr.split("%", 1)[0]) for addr in found]


def _port(url: httpx.URL) -> int:
    return 443 if url.scheme == "https" else 80


def _reason(exc: Exception) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
