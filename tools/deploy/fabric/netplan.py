"""Fabric addresses when the cabled cage has none Scout can use: NVIDIA's netplan, as a gated step.

NVIDIA's current "Connect two Sparks" playbook (dgx-spark-playbooks connect-two-sparks/README.md,
Jul 2026; docs/sources.md §2.1) writes `/etc/netplan/40-cx7.yaml` (mode 600, then `sudo
netplan apply`) with one subnet per PCIe twin of the cabled cage: node 1 `enp1s0f1np1`
192.168.100.10/24 and `enP2p1s0f1np1` 192.168.101.10/24, node 2 `.11` in both, `dhcp4: no`.
Its older version used link-local addresses (169.254/16), which it now allows with ONE cable only;
with two cables, or with no IPv4 at all, each twin needs its own subnet. The step backs up any
existing file and its rollback restores it.
"""

from __future__ import annotations

import shlex

from tools.deploy.steps import DeployStep, StepCheck

NETPLAN_FILE = "/etc/netplan/40-cx7.yaml"
BACKUP = NETPLAN_FILE + ".scout-backup"
SUBNETS = ("192.168.100", "192.168.101")  # primary path, then its PCIe twin
FIRST_HOST = 10  # node 1 is .10, node 2 .11, … (the playbook's numbering)


def planned_addresses(netdevs: list[str], node_index: int) -> dict[str, str]:
    """netdev → address/24 for the node at `node_index` (0 = the head), primary path first."""
    host = FIRST_HOST + node_index
    return {netdev: f"{SUBNETS[i]}.{host}/24" for i, netdev in enumerate(netdevs[:2])}


def netplan_yaml(addresses: dict[str, str]) -> str:
    lines = ["network:", "  version: 2", "  ethernets:"]
    for netdev, cidr in addresses.items():
        lines += [f"    {netdev}:", "      dhcp4: no", f"      addresses: [{cidr}]"]
    return "\n".join(lines)


def netplan_step(host: str, addresses: dict[str, str]) -> DeployStep:
    """Write NVIDIA's 40-cx7.yaml with these addresses and apply it (existing file backed up)."""
    # one line in the plan: printf turns each \n of its format into a newline
    content = shlex.quote(netplan_yaml(addresses).replace("\n", "\\n") + "\\n")
    primary, cidr = next(iter(addresses.items()))
    ip = cidr.split("/")[0]
    return DeployStep(
        kind="netplan",
        id=f"netplan:{host}",
        title="give the fabric ports NVIDIA's per-twin subnets ("
        + ", ".join(f"{n} {a}" for n, a in addresses.items())
        + f") in {NETPLAN_FILE}",
        host=host,
        actions=[
            f"if [ -e {NETPLAN_FILE} ]; then sudo cp -p {NETPLAN_FILE} {BACKUP}; fi && "
            f"printf {content} | sudo tee {NETPLAN_FILE} > /dev/null && "
            f"sudo chmod 600 {NETPLAN_FILE} && sudo netplan apply"
        ],
        check=StepCheck(
            host=host,
            command=f"ip -4 -br addr show dev {primary}",
            expect=rf"\b{ip.replace('.', '[.]')}/24\b",
            description=f"{primary} has {cidr}",
        ),
        rollback=(
            f"if [ -e {BACKUP} ]; then sudo mv {BACKUP} {NETPLAN_FILE}; else sudo rm -f "
            f"{NETPLAN_FILE}; fi && sudo netplan apply"
        ),
        expected_downtime="the fabric ports' addresses change for a few seconds",
    )
