"""The RoCE fabric between hosts: RDMA devices, links up, addresses in a shared subnet, speed.

A link-local IPv4 address (169.254.x.y/16, NVIDIA's Oct 2025 "connect two Sparks" netplan) is a
usable fabric address while one QSFP cable is in use: NVIDIA's guide allows link-local with ONE
cable only; with two, all four ports need addresses in distinct subnets (docs/sources.md §2.1).

`rdma_findings` also runs in a deployment's preflight; `fabric_findings` describes the fabric for
the world model (preflight checks the one path the deployment will use:
tools/deploy/plan/preflight.py).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from tools.world.facts import HostFacts, Interface, RdmaPort
from tools.world.findings import Finding, Severity

FABRIC_SPEED_MBPS = 200_000
CHECK = "fabric"
LinkState = Literal["up", "unknown", "none"]


@dataclass(frozen=True)
class PairLink:
    """Whether two hosts can talk over the fabric: `up` on a subnet both have on an Up port,
    `unknown` when one of them has no Up fabric address yet (a link down), `none` when both have
    addresses but on no common subnet (in NVIDIA's three-Spark ring each cable has its own /24,
    so every pair has one; in a longer ring non-neighbours have none)."""

    state: LinkState
    subnet: ipaddress.IPv4Network | None = None


def is_primary_path(netdev: str) -> bool:
    """enp1s0f1np1 rather than its PCIe twin enP2p1s0f1np1: the path sockets are pinned to."""
    return netdev.startswith("enp")


def cage(netdev: str) -> str | None:
    """The QSFP cage a ConnectX netdev belongs to: enp1s0f1np1 and its PCIe twin enP2p1s0f1np1
    are both cage `p1` (one physical port seen through two PCIe paths, docs/sources.md §1.3)."""
    match = re.search(r"np(\d+)$", netdev)
    return f"p{match[1]}" if match else None


def _is_up(nic: Interface) -> bool:
    return (nic.state or "").upper() == "UP"


def cabled_cages(facts: HostFacts) -> set[str]:
    """Cages with a link: those of the host's Up fabric netdevs."""
    return {c for n in facts.network.interfaces if n.fabric and _is_up(n) if (c := cage(n.name))}


def link_local_usable(facts: HostFacts) -> bool:
    """Link-local addresses carry the fabric while a single cable is in use (module docstring)."""
    return len(cabled_cages(facts)) == 1


def _up_ipv4(nic: Interface, link_local_ok: bool = False) -> list[ipaddress.IPv4Interface]:
    if not _is_up(nic):
        return []
    found = []
    for cidr in nic.addresses:
        address = ipaddress.ip_interface(cidr)
        if isinstance(address, ipaddress.IPv4Interface) and (
            link_local_ok or not address.ip.is_link_local
        ):
            found.append(address)
    return found


def fabric_ipv4(facts: HostFacts, nic: Interface) -> ipaddress.IPv4Interface | None:
    """The address `nic` carries fabric traffic on: its first usable IPv4 address, if Up."""
    found = _up_ipv4(nic, link_local_usable(facts)) if nic.fabric else []
    return found[0] if found else None


def fabric_subnets(facts: HostFacts) -> dict[ipaddress.IPv4Network, list[str]]:
    """Each IPv4 subnet on an Up fabric interface, with the netdevs in it (primary path first)."""
    subnets: dict[ipaddress.IPv4Network, list[str]] = {}
    link_local_ok = link_local_usable(facts)
    for nic in facts.network.interfaces:
        if nic.fabric:
            for address in _up_ipv4(nic, link_local_ok):
                subnets.setdefault(address.network, []).append(nic.name)
    for names in subnets.values():
        names.sort(key=lambda name: (not is_primary_path(name), name))
    return subnets


def shared_subnets(hosts: Sequence[HostFacts]) -> list[ipaddress.IPv4Network]:
    """Subnets every one of `hosts` has on an Up fabric port; the first host's primary first."""
    if not hosts:
        return []
    first = fabric_subnets(hosts[0])
    shared = set(first).intersection(*(fabric_subnets(h) for h in hosts[1:]))
    return sorted(shared, key=lambda net: (not is_primary_path(first[net][0]), net))


def pair_link(a: HostFacts, b: HostFacts) -> PairLink:
    """How `a` and `b` can talk over the fabric (see PairLink)."""
    shared = shared_subnets([a, b])
    if shared:
        return PairLink("up", shared[0])
    if not fabric_subnets(a) or not fabric_subnets(b):
        return PairLink("unknown")
    return PairLink("none")


def rdma_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    """GPU hosts with no RDMA device at all: for more than one host, only a person can fix it."""
    bare = [
        name
        for name, facts in hosts.items()
        if not facts.rdma.ports and facts.rdma.problem is None and facts.gpu.gpus
    ]
    if not bare:
        return []
    return [
        Finding(
            severity="blocker" if len(hosts) > 1 else "warning",
            check="rdma",
            kind="no_rdma_devices",
            hosts=bare,
            message=f"no RDMA devices on {', '.join(bare)} (no ConnectX port at all)",
            fix="check the cable, then the driver: plug a QSFP cable into the same cage on "
            "every node (the ConnectX-7 may only enumerate with a cable) and reboot; if "
            "`lspci | grep -i mellanox` still lists nothing or `ibdev2netdev` stays empty, "
            "check the mlx5 driver (`lsmod | grep mlx5_core`); this needs a person at the "
            "machine",
            needs_person=True,
        )
    ]


def fabric_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    """Links down, then addresses and speeds."""
    return _link_findings(hosts) + _address_findings(hosts)


def _link_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    """Hosts whose ConnectX ports are all down, with what brings them up."""
    findings = []
    severity: Severity = "blocker" if len(hosts) > 1 else "warning"
    for name, facts in hosts.items():
        ports = facts.rdma.ports
        if ports and not any(port.up for port in ports):
            findings.append(
                Finding(
                    severity=severity,
                    check=CHECK,
                    kind="roce_link_down",
                    hosts=[name],
                    message=f"RoCE link down on {name}: no ConnectX port is up; "
                    + _link_down_advice(facts),
                    evidence=[_port_line(p) for p in ports],
                )
            )
    return findings


def _link_down_advice(facts: HostFacts) -> str:
    """Admin-down netdevs can be brought up from here; up-but-NO-CARRIER ones need a person."""
    fabric = [n for n in facts.network.interfaces if n.fabric]
    admin_down = [n.name for n in fabric if n.carrier is None and (n.state or "").upper() != "UP"]
    if admin_down:
        commands = " && ".join(f"sudo ip link set {n} up" for n in admin_down)
        return f"bring the interfaces up (`{commands}`); if they stay down, reseat the cable"
    if any(n.carrier is False for n in fabric):
        return (
            "every port is up but has no carrier (NO-CARRIER): reseat the cable in the same "
            "cage on both ends (needs a person)"
        )
    return "reseat the cable (same cage on both ends) or bring the interface up"


def _port_line(port: RdmaPort) -> str:
    states = " ".join(s for s in (port.state, port.physical_state) if s)
    return f"{port.device}/{port.port} {states} netdev {port.netdev}"


def _fabric_networks(facts: HostFacts) -> set[ipaddress.IPv4Network]:
    networks = set()
    link_local_ok = link_local_usable(facts)
    for nic in facts.network.interfaces:
        if not nic.fabric:
            continue
        for cidr in nic.addresses:
            interface = ipaddress.ip_interface(cidr)
            if interface.version == 4 and (link_local_ok or not interface.ip.is_link_local):
                networks.add(interface.network)
    return networks


def _address_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    """Link-local addresses on two cables, slow links, and hosts with no fabric subnet in common."""
    findings = [f for name, facts in hosts.items() if (f := link_local_finding(name, facts))]
    for name, facts in hosts.items():
        slow = [
            n
            for n in facts.network.interfaces
            if n.fabric and n.speed_mbps is not None and n.speed_mbps < FABRIC_SPEED_MBPS
        ]
        if slow:
            findings.append(
                Finding(
                    severity="warning",
                    check=CHECK,
                    kind="link_speed_low",
                    hosts=[name],
                    message=f"{name}: fabric link below 200G: "
                    + ", ".join(f"{n.name} {n.speed_mbps // 1000}G" for n in slow),
                )
            )
    names = [n for n in hosts if hosts[n].rdma.ports or hosts[n].network.interfaces]
    if len(names) > 1:
        findings += _reachability_findings(hosts, names)
    return findings


def _reachability_findings(hosts: Mapping[str, HostFacts], names: list[str]) -> list[Finding]:
    """Hosts that reach no other host over a fabric subnet, judged per pair: a ring with one
    /24 per cable is connected although no subnet spans all of it."""
    groups = _connected(names, lambda a, b: pair_link(hosts[a], hosts[b]).state == "up")
    if len(groups) == 1:
        return []
    networks = {name: _fabric_networks(hosts[name]) for name in names}
    evidence = [
        f"{name}: {', '.join(sorted(map(str, nets))) or 'no fabric IPv4 address'}"
        for name, nets in networks.items()
    ]
    if all(len(group) == 1 for group in groups):
        message = "no IPv4 subnet is shared by the ConnectX interfaces of " + ", ".join(names)
    else:
        main, *rest = sorted(groups, key=len, reverse=True)
        apart = ", ".join(name for group in rest for name in group)
        message = (
            f"the ConnectX interfaces of {apart} share no IPv4 subnet with those of "
            + ", ".join(main)
        )
    return [
        Finding(
            severity="warning",
            check=CHECK,
            kind="no_shared_fabric_subnet",
            hosts=names,
            message=message,
            evidence=evidence,
        )
    ]


def _connected(names: list[str], linked: Callable[[str, str], bool]) -> list[list[str]]:
    """Groups of `names` joined by `linked(a, b)` pairs, each in the order of `names`."""
    groups: list[list[str]] = []
    for name in names:
        joined = [g for g in groups if any(linked(name, other) for other in g)]
        merged = [m for g in joined for m in g] + [name]
        groups = [g for g in groups if g not in joined] + [merged]
    order = {name: i for i, name in enumerate(names)}
    return sorted((sorted(g, key=order.__getitem__) for g in groups), key=lambda g: order[g[0]])


def link_local_finding(name: str, facts: HostFacts) -> Finding | None:
    """Two cables with link-local addresses: every port sits in 169.254.0.0/16, so the kernel
    cannot tell which cable leads where; NVIDIA's guide puts each twin on its own subnet."""
    cages = cabled_cages(facts)
    local = [
        n.name
        for n in facts.network.interfaces
        if n.fabric and _is_up(n) and n.addresses and not _up_ipv4(n)
    ]
    if len(cages) < 2 or not local:
        return None
    return Finding(
        severity="warning",
        check=CHECK,
        kind="link_local_two_cables",
        hosts=[name],
        message=f"{name}: two QSFP cables in use (cages {', '.join(sorted(cages))}) but "
        f"{', '.join(local)} have only link-local addresses, which NVIDIA allows with one cable "
        "only; give each twin its own subnet",
        fix="a static address per twin, one subnet each (NVIDIA's /etc/netplan/40-cx7.yaml: "
        "192.168.100.x/24 on enp1s0f1np1, 192.168.101.x/24 on enP2p1s0f1np1, and so on for "
        "the other cage), then `sudo netplan apply`",
        evidence=[
            f"{n.name}: {' '.join(n.addresses)}"
            for n in facts.network.interfaces
            if n.fabric and _is_up(n)
        ],
    )
