"""Which fabric path each node talks over: socket netdev, its IP, and the HCAs NCCL uses.

- A subnet every chosen node has on an Up port (two Sparks on one cable, Sparks behind a
  switch, H100 nodes on one Ethernet subnet): each node's netdev in that subnet, which may have
  another name on each node (in NVIDIA's three-Spark ring, node 1's Port0 cable goes to node 2's
  Port1). On a Spark one QSFP cage shows up as two netdevs and two RDMA devices
  (enp1s0f1np1 / enP2p1s0f1np1, rocep1s0f1 / roceP2p1s0f1): NCCL gets both twins.
- InfiniBand nodes (8-GPU H100): sockets on that subnet, NCCL on every Up InfiniBand HCA (the
  compute rails, mlx5_*); nothing RoCE-specific.
- Every pair of nodes shares a subnet but no subnet spans them all (three Sparks in a ring, one
  /24 per cable): engine sockets on the management network every node shares, NCCL on all Up
  HCAs with subnet-aware routing, as NVIDIA's cluster setup runs its ring NCCL test
  (dgx-spark-playbooks multi-sparks-through-switch/assets/spark_cluster_setup/
  spark_cluster_setup.py: UCX/NCCL socket/OMPI on enP7s7, NCCL_IB_HCA = all four,
  NCCL_IB_SUBNET_AWARE_ROUTING=1, and for a ring NCCL_IB_MERGE_NICS=0 NCCL_NET_PLUGIN=none).
- The cabled cage is Up on every node but has no address Scout can use: link-local addresses
  (169.254/16) on ONE cable are used as they are, as NVIDIA's guide allows; otherwise (no IPv4,
  or link-local on two cables) each path carries the addresses NVIDIA's netplan would give it
  (`netplan`, tools/deploy/fabric/netplan.py) and the plan writes that file first.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from tools.checks.fabric import (
    fabric_ipv4,
    fabric_subnets,
    is_primary_path,
    pair_link,
    shared_subnets,
)
from tools.deploy.fabric.netplan import planned_addresses
from tools.world.facts import HostFacts, Interface

_DOMAIN_PREFIX = re.compile(r"^en(?:P\d+)?p")


class FabricError(Exception):
    """No usable fabric path; the message says what was found and what to do."""


@dataclass(frozen=True)
class FabricPath:
    """One node's end of the fabric. `ip` is None when the link is down and no address is known;
    `routed`: subnets differ per pair (a ring), so NCCL must route by subnet."""

    host: str
    netdev: str
    ip: str | None
    hcas: tuple[str, ...]
    link_up: bool
    down_netdevs: tuple[str, ...] = ()
    routed: bool = False
    link_local: bool = False  # `ip` is a 169.254/16 address (one cable, as NVIDIA allows)
    netplan: tuple[tuple[str, str], ...] = ()  # (netdev, address/24) the plan must write first
    gid_index: int | None = None  # the RoCE v2 IPv4 GID every HCA has at this index

    def ip_or_lookup(self, via: str | None = None) -> str:
        """The literal IP, or a shell lookup of it (valid once the link is up): on the host
        itself, or from another host through `ssh via` (the address that host already reaches
        this one at; ssh verifies its host key as for any other command)."""
        if self.ip:
            return self.ip
        show = f"ip -4 -br addr show dev {self.netdev}"
        if via is not None:
            show = f"ssh {via} {show}"
        return f"$({show} | grep -oE '[0-9]+([.][0-9]+){{3}}' | head -n 1)"


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


def _same_name_candidates(hosts: Mapping[str, HostFacts], order: list[str]) -> list[str]:
    """Netdev names Up on every node with an address on one shared subnet; primary path first."""
    head = hosts[order[0]]
    found = []
    for nic in head.network.interfaces:
        if not _usable(nic):
            continue
        network = _ipv4(nic).network  # type: ignore[union-attr]
        peers = [_nic(hosts[h], nic.name) for h in order[1:]]
        if all(p is not None and _usable(p) and _ipv4(p).network == network for p in peers):  # type: ignore[union-attr]
            found.append(nic.name)
    return sorted(found, key=lambda name: (not is_primary_path(name), name))


def _hcas(facts: HostFacts, netdev: str) -> tuple[str, ...]:
    """NCCL's HCAs: every Up InfiniBand rail, else both PCIe twins of the netdev's cage."""
    rails = [p.device for p in facts.rdma.ports if p.infiniband and p.up]
    if rails:
        return tuple(rails)
    key = cage_key(netdev)
    twins = sorted(
        (p for p in facts.rdma.ports if p.netdev and cage_key(p.netdev) == key),
        key=lambda p: (not is_primary_path(p.netdev or ""), p.device),
    )
    return tuple(p.device for p in twins)


def _path(facts: HostFacts, netdev: str, node_ip: str | None) -> FabricPath:
    nic = _nic(facts, netdev)
    key = cage_key(netdev)
    siblings = [n for n in facts.network.interfaces if n.fabric and cage_key(n.name) == key]
    down = tuple(
        n.name
        for n in sorted(siblings, key=lambda n: (not is_primary_path(n.name), n.name))
        if (n.state or "").upper() != "UP"
    )
    # link-local counts where it carries the fabric (one cable: tools/checks/fabric.py)
    address = fabric_ipv4(facts, nic) if nic is not None else None
    return FabricPath(
        host=facts.host,
        netdev=netdev,
        ip=str(address.ip) if address else node_ip,
        hcas=_hcas(facts, netdev),
        link_up=address is not None,
        down_netdevs=down,
        link_local=address is not None and address.ip.is_link_local,
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
    paths = _find(hosts, order, interface, node_ips or {})
    return {h: replace(p, gid_index=_gid_index(hosts[h], p)) for h, p in paths.items()}


def _gid_index(facts: HostFacts, path: FabricPath) -> int | None:
    """The GID index of the RoCE v2 IPv4 entry, read for this node (`ibv_devinfo -v`): the
    same on every HCA of the path (the one of the path's address where a device has several),
    else None, and NCCL keeps choosing its own."""
    indexes = set()
    for device in path.hcas:
        entries = [g for g in facts.rdma.roce_v2_ipv4_gids if g.device == device]
        if not entries:
            return None
        chosen = next((g for g in entries if g.ipv4 == path.ip), entries[0])
        indexes.add(chosen.index)
    return indexes.pop() if len(indexes) == 1 else None


def _find(
    hosts: Mapping[str, HostFacts],
    order: list[str],
    interface: str | None,
    node_ips: Mapping[str, str],
) -> dict[str, FabricPath]:
    if interface is not None:
        chosen = _named(hosts, order, interface)
        return {h: _path(hosts[h], chosen, node_ips.get(h)) for h in order}
    shared = shared_subnets([hosts[h] for h in order])
    if shared:
        return {
            h: _path(hosts[h], fabric_subnets(hosts[h])[shared[0]][0], node_ips.get(h))
            for h in order
        }
    if len(order) == 1:
        return _single(hosts[order[0]])
    pairs = [(a, b) for i, a in enumerate(order) for b in order[i + 1 :]]
    if len(order) > 2 and all(pair_link(hosts[a], hosts[b]).state == "up" for a, b in pairs):
        return _routed(hosts, order)
    unaddressed = _unaddressed(hosts, order)
    if unaddressed is not None:
        return unaddressed
    chosen = _head_choice(hosts, order)
    return {h: _path(hosts[h], chosen, node_ips.get(h)) for h in order}


def _named(hosts: Mapping[str, HostFacts], order: list[str], interface: str) -> str:
    """The netdev the user named, if every node has it; else why not and what to use."""
    missing = [h for h in order if _nic(hosts[h], interface) is None]
    if missing:
        raise FabricError(
            f"{missing[0]} has no interface {interface} ({_describe(hosts[missing[0]])}); "
            "leave fabric_interface unset to use the one found Up on every node"
        )
    shared = _same_name_candidates(hosts, order)
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
    return interface


def _routed(hosts: Mapping[str, HostFacts], order: list[str]) -> dict[str, FabricPath]:
    """A ring: sockets on the management subnet all nodes share, NCCL on every Up HCA."""
    management = _shared_management(hosts, order)
    if management is None:
        raise FabricError(
            f"every pair of {', '.join(order)} shares a fabric subnet of its own (a ring), but "
            "no subnet reaches all of them for the engine's sockets (no management network in "
            "common): use fewer nodes, or give every node an address on one network"
        )
    paths = {}
    for h in order:
        netdev, ip = management[h]
        ports = hosts[h].rdma.ports
        paths[h] = FabricPath(
            host=h,
            netdev=netdev,
            ip=ip,
            hcas=tuple(sorted((p.device for p in ports if p.up), key=_hca_order)),
            link_up=True,
            routed=True,
        )
    return paths


def _single(facts: HostFacts) -> dict[str, FabricPath]:
    """One node talks to nobody: its first Up address stands in for the rendezvous address."""
    own = _shared_management({facts.host: facts}, [facts.host])
    if own is None:
        raise FabricError(f"{facts.host} has no interface Up with an IPv4 address")
    netdev, ip = own[facts.host]
    return {facts.host: FabricPath(facts.host, netdev, ip, (), link_up=True)}


def _hca_order(device: str) -> tuple[bool, str]:
    return (device.startswith("roceP"), device)


def _shared_management(
    hosts: Mapping[str, HostFacts], order: list[str]
) -> dict[str, tuple[str, str]] | None:
    """Per node (netdev, ip) on a non-fabric IPv4 subnet every node has Up, or None."""
    by_host: list[dict[ipaddress.IPv4Network, tuple[str, str]]] = []
    for h in order:
        nets: dict[ipaddress.IPv4Network, tuple[str, str]] = {}
        for nic in hosts[h].network.interfaces:
            address = _ipv4(nic)
            if nic.fabric or address is None or (nic.state or "").upper() != "UP":
                continue
            if nic.name.startswith(("docker", "br-", "veth")):
                continue
            nets.setdefault(address.network, (nic.name, str(address.ip)))
        by_host.append(nets)
    common = set(by_host[0]).intersection(*by_host[1:])
    if not common:
        return None
    network = min(common)
    return {h: nets[network] for h, nets in zip(order, by_host, strict=True)}


def _head_choice(hosts: Mapping[str, HostFacts], order: list[str]) -> str:
    """No path is Up everywhere: take the head's Up primary netdev; peers must bring theirs up."""
    head = hosts[order[0]]
    usable = sorted(
        (n.name for n in head.network.interfaces if _usable(n)),
        key=lambda name: (not is_primary_path(name), name),
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


def _up_cages(facts: HostFacts) -> dict[str, list[str]]:
    """Cage key → its fabric netdevs (primary path first), for cages with a netdev Up and not
    NO-CARRIER: the cables plugged in."""
    cages: dict[str, list[str]] = {}
    for nic in facts.network.interfaces:
        if nic.fabric and (nic.state or "").upper() == "UP" and nic.carrier is not False:
            cages.setdefault(cage_key(nic.name), [])
    for nic in facts.network.interfaces:
        if nic.fabric and cage_key(nic.name) in cages:
            cages[cage_key(nic.name)].append(nic.name)
    for names in cages.values():
        names.sort(key=lambda name: (not is_primary_path(name), name))
    return cages


def _link_local(nic: Interface | None) -> ipaddress.IPv4Interface | None:
    for cidr in nic.addresses if nic else []:
        found = ipaddress.ip_interface(cidr)
        if isinstance(found, ipaddress.IPv4Interface) and found.ip.is_link_local:
            return found
    return None


def _unaddressed(hosts: Mapping[str, HostFacts], order: list[str]) -> dict[str, FabricPath] | None:
    """Every node has the head's cabled cage Up but no shared routable subnet: link-local on a
    single cable as is, else the netplan addresses; None when a node lacks that cage Up."""
    cages = [_up_cages(hosts[h]) for h in order]
    if not cages[0]:
        return None
    # the cage NVIDIA's netplan addresses (p1: enp1s0f1np1 / enP2p1s0f1np1) when it is cabled
    key = sorted(cages[0], key=lambda k: (not k.endswith("f1np1"), k))[0]
    if not all(key in c for c in cages):
        return None
    primary = {h: c[key][0] for h, c in zip(order, cages, strict=True)}
    locals_ = [_link_local(_nic(hosts[h], primary[h])) for h in order]
    if all(len(c) == 1 for c in cages) and all(
        ll is not None and ll.network == locals_[0].network  # type: ignore[union-attr]
        for ll in locals_
    ):
        return {
            h: FabricPath(
                h, primary[h], str(ll.ip), _hcas(hosts[h], primary[h]), True, link_local=True
            )
            for h, ll in zip(order, locals_, strict=True)
            if ll is not None
        }
    paths = {}
    for index, (h, c) in enumerate(zip(order, cages, strict=True)):
        addresses = planned_addresses(c[key], index)
        paths[h] = FabricPath(
            host=h,
            netdev=primary[h],
            ip=addresses[primary[h]].split("/")[0],
            hcas=_hcas(hosts[h], primary[h]),
            link_up=True,
            netplan=tuple(addresses.items()),
        )
    return paths
