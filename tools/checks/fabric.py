"""The RoCE fabric between hosts: RDMA devices, links up, addresses in a shared subnet, speed.

`rdma_findings` also runs in a deployment's preflight; `fabric_findings` describes the fabric for
the world model (preflight checks the one path the deployment will use: tools/deploy/preflight.py).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from tools.checks.finding import Finding, Severity
from tools.recon.facts import HostFacts, Interface, RdmaPort

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


def _up_ipv4(nic: Interface) -> list[ipaddress.IPv4Interface]:
    if (nic.state or "").upper() != "UP":
        return []
    found = []
    for cidr in nic.addresses:
        address = ipaddress.ip_interface(cidr)
        if isinstance(address, ipaddress.IPv4Interface) and not address.ip.is_link_local:
            found.append(address)
    return found


def fabric_subnets(facts: HostFacts) -> dict[ipaddress.IPv4Network, list[str]]:
    """Each IPv4 subnet on an Up fabric interface, with the netdevs in it (primary path first)."""
    subnets: dict[ipaddress.IPv4Network, list[str]] = {}
    for nic in facts.network.interfaces:
        if nic.fabric:
            for address in _up_ipv4(nic):
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
            fix="plug a QSFP cable into the same cage on every node (the ConnectX-7 may only "
            "enumerate with a cable) and reboot; this needs a person at the machine",
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
    for nic in facts.network.interfaces:
        if not nic.fabric:
            continue
        for cidr in nic.addresses:
            interface = ipaddress.ip_interface(cidr)
            if interface.version == 4 and not interface.ip.is_link_local:
                networks.add(interface.network)
    return networks


def _address_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    """Link-local-only or slow fabric interfaces, and hosts with no fabric subnet in common."""
    findings = []
    for name, facts in hosts.items():
        local_only = [n.name for n in facts.network.interfaces if n.fabric and n.link_local_only]
        if local_only:
            findings.append(
                Finding(
                    severity="warning",
                    check=CHECK,
                    kind="link_local_fabric",
                    hosts=[name],
                    message=f"{name}: fabric interface(s) {', '.join(local_only)} have only "
                    "link-local addresses; give each a static address in a shared subnet",
                )
            )
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
