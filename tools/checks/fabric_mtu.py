"""MTU on the fabric: both ends of a ConnectX link must agree.

The CX-7 default is 1500 (fixtures/recon/spark_ip_s_link_show_cx7_nocable.txt, and NVIDIA's own
`ip addr show enp1s0f1np1` example); community two-Spark notes raise it to 9000 on the direct
link. Either works when both ends agree; when they differ, large frames from the 9000 side are
dropped (jumbo pings `ping -M do -s 8972` fail; docs/sources.md §6 #9).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

from tools.checks.fabric import CHECK, fabric_subnets, shared_subnets
from tools.world.facts import HostFacts
from tools.world.findings import Finding


def mtu_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    """One warning per pair of hosts whose netdevs in a shared fabric subnet differ in MTU."""
    findings = []
    for a, b in combinations(hosts, 2):
        ends = [
            (h, n, _mtu(hosts[h], n))
            for subnet in shared_subnets([hosts[a], hosts[b]])
            for h in (a, b)
            for n in fabric_subnets(hosts[h])[subnet]
        ]
        mtus = {mtu for _h, _n, mtu in ends if mtu is not None}
        if len(mtus) < 2:
            continue
        low, high = min(mtus), max(mtus)
        findings.append(
            Finding(
                severity="warning",
                check=CHECK,
                kind="fabric_mtu_mismatch",
                hosts=[a, b],
                message=f"fabric MTU differs between {a} and {b} ({low} vs {high}): frames "
                f"above {low} bytes from the {high} side are dropped",
                fix="set the same MTU on both ends: "
                + "; ".join(
                    f"on {h} `sudo ip link set {n} mtu {high}`" for h, n, mtu in ends if mtu != high
                )
                + " (and in the netplan file, so it lasts)",
                evidence=[f"{h} {n}: mtu {mtu}" for h, n, mtu in ends],
            )
        )
    return findings


def _mtu(facts: HostFacts, netdev: str) -> int | None:
    return next((n.mtu for n in facts.network.interfaces if n.name == netdev), None)
