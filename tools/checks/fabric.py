"""The RoCE fabric between hosts: RDMA devices, links up, addresses in a shared subnet, speed.

`rdma_findings` also runs in a deployment's preflight; `fabric_findings` describes the fabric for
the world model (preflight checks the one path the deployment will use: tools/deploy/preflight.py).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from tools.checks.finding import Finding, Severity
from tools.recon.facts import HostFacts, RdmaPort

FABRIC_SPEED_MBPS = 200_000
CHECK = "fabric"


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
        networks = {name: _fabric_networks(hosts[name]) for name in names}
        shared = set.intersection(*networks.values())
        if not shared:
            findings.append(
                Finding(
                    severity="warning",
                    check=CHECK,
                    kind="no_shared_fabric_subnet",
                    hosts=names,
                    message="no IPv4 subnet is shared by the ConnectX interfaces of "
                    + ", ".join(names),
                    evidence=[
                        f"{name}: {', '.join(sorted(map(str, nets))) or 'no fabric IPv4 address'}"
                        for name, nets in networks.items()
                    ],
                )
            )
    return findings
