"""Which ConnectX path each node talks over: netdev, fabric IP, and both PCIe twins of its cage.

One QSFP cage shows up as two netdevs and two RDMA devices (enp1s0f1np1 / enP2p1s0f1np1,
rocep1s0f1 / roceP2p1s0f1). NCCL wants both twins in NCCL_IB_HCA; sockets want the primary
netdev that is Up with an address on a subnet every node shares.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass

from tools.recon.facts import HostFacts, Interface

_DOMAIN_PREFIX = re.compile(r"^en(?:P\d+)?p")


class FabricError(Exception):
    """No usable fabric path; the message says what was found and what to do."""


@dataclass(frozen=True)
class FabricPath:
    """One node's end of the fabric. `ip` is None when the link is down and no address is known."""

    host: str
    netdev: str
    ip: str | None
    hcas: tuple[str, ...]
    link_up: bool
    down_netdevs: tuple[str, ...] = ()

    def ip_or_lookup(self) -> str:
        """The literal IP, or a shell lookup of it on the host (valid once the link is up)."""
        if self.ip:
            return self.ip
        return (
            f"$(ip -4 -br addr show dev {self.netdev} | grep -oE '[0-9]+([.][0-9]+){{3}}' "
            "| head -n 1)"
        )


def cage_key(netdev: str) -> str:
    """enp1s0f1np1 and enP2p1s0f1np1 share the key '1s0f1np1': the same cage, two PCIe paths."""
    return _DOMAIN_PREFIX.sub("", netdev)


def _ipv4(nic: Interface) -> ipaddress.IPv4Interface | None:
    for cidr in nic.addresses:
        found = ipaddress.ip_interface(cidr)
        if isinstance(found, ipaddress.IPv4Interface) and not found.ip.is_link_local:
            return found
    return None


def _usable(nic: Interface) -> bool:
    return nic.fabric and (nic.state or "").upper() == "UP" and _ipv4(nic) is not None


def _nic(facts: HostFacts, name: str) -> Interface | None:
    return next((n for n in facts.network.interfaces if n.name == name), None)


def _shared_candidates(hosts: Mapping[str, HostFacts], order: list[str]) -> list[str]:
    """Netdev names Up with an address on every node, on one shared subnet; primary path first."""
    head = hosts[order[0]]
    found = []
    for nic in head.network.interfaces:
        if not _usable(nic):
            continue
        network = _ipv4(nic).network  # type: ignore[union-attr]
        peers = [_nic(hosts[h], nic.name) for h in order[1:]]
        if all(p is not None and _usable(p) and _ipv4(p).network == network for p in peers):  # type: ignore[union-attr]
            found.append(nic.name)
    return sorted(found, key=lambda name: (not _is_primary(name), name))


def _is_primary(name: str) -> bool:
    return name.startswith("enp")


def _path(facts: HostFacts, netdev: str, node_ip: str | None) -> FabricPath:
    nic = _nic(facts, netdev)
    key = cage_key(netdev)
    twins = sorted(
        (p for p in facts.rdma.ports if p.netdev and cage_key(p.netdev) == key),
        key=lambda p: (not _is_primary(p.netdev or ""), p.device),
    )
    siblings = [n for n in facts.network.interfaces if n.fabric and cage_key(n.name) == key]
    down = tuple(
        n.name
        for n in sorted(siblings, key=lambda n: (not _is_primary(n.name), n.name))
        if (n.state or "").upper() != "UP"
    )
    up = nic is not None and _usable(nic)
    address = _ipv4(nic) if (nic is not None and up) else None
    return FabricPath(
        host=facts.host,
        netdev=netdev,
        ip=str(address.ip) if address else node_ip,
        hcas=tuple(p.device for p in twins),
        link_up=up,
        down_netdevs=down,
    )


def _describe(facts: HostFacts) -> str:
    parts = []
    for nic in facts.network.interfaces:
        if nic.fabric:
            address = _ipv4(nic)
            parts.append(f"{nic.name} {nic.state or '?'}" + (f" {address}" if address else ""))
    return ", ".join(parts) or "no ConnectX interfaces"


def find_fabric(
    hosts: Mapping[str, HostFacts],
    order: list[str],
    *,
    interface: str | None = None,
    node_ips: Mapping[str, str] | None = None,
) -> dict[str, FabricPath]:
    """Each node's fabric path, head (order[0]) first; raises FabricError when there is none."""
    node_ips = node_ips or {}
    shared = _shared_candidates(hosts, order)
    if interface is not None:
        missing = [h for h in order if _nic(hosts[h], interface) is None]
        if missing:
            raise FabricError(
                f"{missing[0]} has no interface {interface} ({_describe(hosts[missing[0]])}); "
                "leave fabric_interface unset to use the one found Up on every node"
            )
        dead = [h for h in order if not _usable(_nic(hosts[h], interface))]  # type: ignore[arg-type]
        if dead and shared and interface not in shared:
            first = shared[0]
            addresses = ", ".join(
                f"{h} {_ipv4(_nic(hosts[h], first))}"
                for h in order  # type: ignore[arg-type]
            )
            raise FabricError(
                f"{interface} has no link or address on {', '.join(dead)}; the fabric is on "
                f"{first} ({addresses}): use fabric_interface={first} or leave it unset"
            )
        chosen = interface
    elif shared:
        chosen = shared[0]
    else:
        chosen = _head_choice(hosts, order)
    return {h: _path(hosts[h], chosen, node_ips.get(h)) for h in order}


def _head_choice(hosts: Mapping[str, HostFacts], order: list[str]) -> str:
    """No path is Up everywhere: take the head's Up primary netdev; peers must bring theirs up."""
    head = hosts[order[0]]
    usable = sorted(
        (n.name for n in head.network.interfaces if _usable(n)),
        key=lambda name: (not _is_primary(name), name),
    )
    if not usable:
        raise FabricError(
            f"the head {order[0]} has no ConnectX interface Up with an IPv4 address "
            f"({_describe(head)}); cable the same QSFP cage on every node and give each end a "
            "static address in one subnet (e.g. 192.168.100.10/24 and .11/24)"
        )
    for name in usable:
        if all(_nic(hosts[h], name) is not None for h in order[1:]):
            return name
    raise FabricError(
        f"{order[0]}'s fabric interface {usable[0]} has no counterpart on "
        + ", ".join(h for h in order[1:] if _nic(hosts[h], usable[0]) is None)
    )
