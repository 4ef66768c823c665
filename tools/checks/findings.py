"""Findings: what the probed facts mean across hosts, computed by code, each with its evidence.

The model reads these instead of re-deriving them from raw facts; a person reads the same list.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from typing import Literal

from pydantic import BaseModel, Field

from tools.recon.facts import HostFacts, RdmaPort

Severity = Literal["blocker", "warning", "info"]
GB = 1_000_000_000
FABRIC_SPEED_MBPS = 200_000
PAGE_CACHE_WARN_BYTES = 10 * GB
SEVERITY_ORDER = {"blocker": 0, "warning": 1, "info": 2}


class Finding(BaseModel):
    severity: Severity
    kind: str
    hosts: list[str]
    message: str
    evidence: list[str] = Field(default_factory=list)


def gb(value: int) -> str:
    """Bytes as whole decimal gigabytes, the way people size models ("~119 GB")."""
    return f"{value / GB:.0f} GB"


def compute_findings(
    hosts: Mapping[str, HostFacts], model_size_bytes: int | None = None
) -> list[Finding]:
    """Every finding for the hosts given, blockers first."""
    findings = memory_findings(hosts, model_size_bytes)
    for check in _CHECKS:
        findings += check(hosts)
    return sorted(findings, key=lambda f: SEVERITY_ORDER[f.severity])


def _running_with_memory(facts: HostFacts) -> list[tuple[str, int]]:
    return [
        (c.name, c.memory_bytes)
        for c in facts.docker.containers
        if c.state == "running" and c.memory_bytes
    ]


def memory_findings(hosts: Mapping[str, HostFacts], model_size_bytes: int | None) -> list[Finding]:
    """Per-host budget; with a model size, whether it fits (split evenly across all hosts)."""
    findings: list[Finding] = []
    budgets = {name: f.memory.budget_bytes for name, f in hosts.items()}
    for name, facts in hosts.items():
        for container, held in _running_with_memory(facts):
            findings.append(
                Finding(
                    severity="warning",
                    kind="container_holds_memory",
                    hosts=[name],
                    message=f"container {container} holds ~{gb(held)} on {name}",
                    evidence=[_container_evidence(facts, container)],
                )
            )
        budget = budgets[name]
        if budget is not None and model_size_bytes is None:
            kind = "unified memory" if facts.memory.unified_memory else "GPU memory"
            findings.append(
                Finding(
                    severity="info",
                    kind="memory_available",
                    hosts=[name],
                    message=f"{name}: {gb(budget)} available for a model ({kind})",
                    evidence=_memory_evidence(facts),
                )
            )
        findings += _page_cache_findings(name, facts)
    if model_size_bytes is not None:
        findings += _fit_findings(hosts, budgets, model_size_bytes)
    return findings


def _page_cache_findings(name: str, facts: HostFacts) -> list[Finding]:
    """On unified memory, engines size themselves by ~MemFree: page cache counts as used."""
    m = facts.memory
    if not m.unified_memory or m.free_bytes is None or m.available_bytes is None:
        return []
    cached = m.available_bytes - m.free_bytes
    if cached < PAGE_CACHE_WARN_BYTES:
        return []
    return [
        Finding(
            severity="warning",
            kind="page_cache_inflated",
            hosts=[name],
            message=f"{name}: page cache holds ~{gb(cached)} (MemFree {gb(m.free_bytes)}, "
            f"MemAvailable {gb(m.available_bytes)}); vLLM's start check sees about MemFree on "
            "unified memory: drop caches (`sync; echo 3 | sudo tee /proc/sys/vm/drop_caches`) "
            "before starting",
        )
    ]


def _fit_findings(
    hosts: Mapping[str, HostFacts], budgets: Mapping[str, int | None], size: int
) -> list[Finding]:
    known = {name: b for name, b in budgets.items() if b is not None}
    if not known:
        return []
    share = size // len(known)
    findings = []
    for name, budget in known.items():
        if budget >= share:
            continue
        holders = _running_with_memory(hosts[name])
        if holders:
            held = ", ".join(f"{c} holds ~{gb(b)}" for c, b in holders)
            message = (
                f"a ~{gb(size)} model cannot start while {held} on {name}: {gb(budget)} available"
            )
        else:
            message = f"a ~{gb(size)} model does not fit on {name}: {gb(budget)} available"
        if len(known) > 1:
            message += f" (needs ~{gb(share)} per node split over {len(known)} nodes)"
        findings.append(
            Finding(
                severity="blocker",
                kind="model_does_not_fit",
                hosts=[name],
                message=message,
                evidence=_memory_evidence(hosts[name]),
            )
        )
    total = sum(known.values())
    if total < size:
        where = f"all {len(known)} hosts together" if len(known) > 1 else next(iter(known))
        findings.append(
            Finding(
                severity="blocker",
                kind="model_exceeds_cluster",
                hosts=list(known),
                message=f"a ~{gb(size)} model exceeds the {gb(total)} available on {where}",
            )
        )
    elif len(known) > 1 and max(known.values()) < size:
        findings.append(
            Finding(
                severity="info",
                kind="model_needs_all_nodes",
                hosts=list(known),
                message=f"a ~{gb(size)} model fits on no single host; it needs tensor "
                f"parallelism across {len(known)} nodes",
            )
        )
    return findings


def _container_evidence(facts: HostFacts, container: str) -> str:
    match = next(c for c in facts.docker.containers if c.name == container)
    state = match.status or match.state
    return f"{container} ({match.image}) {state}; memory from {match.memory_source}"


def _memory_evidence(facts: HostFacts) -> list[str]:
    m = facts.memory
    if m.total_bytes is None:
        return []
    line = f"/proc/meminfo MemTotal {gb(m.total_bytes)}"
    if m.available_bytes is not None:
        line += f", MemAvailable {gb(m.available_bytes)}"
    return [
        line + (" (unified memory: nvidia-smi memory Not Supported)" if m.unified_memory else "")
    ]


def link_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    findings = []
    severity: Severity = "blocker" if len(hosts) > 1 else "warning"
    for name, facts in hosts.items():
        ports = facts.rdma.ports
        if facts.rdma.problem is None and not ports and facts.gpu.gpus:
            findings.append(
                Finding(
                    severity="warning",
                    kind="no_rdma_devices",
                    hosts=[name],
                    message=f"{name} shows no RDMA devices: no RoCE fabric (on a Spark this can "
                    "mean no cable in the QSFP cage)",
                )
            )
        elif ports and not any(port.up for port in ports):
            findings.append(
                Finding(
                    severity=severity,
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


def fabric_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    findings = []
    for name, facts in hosts.items():
        local_only = [n.name for n in facts.network.interfaces if n.fabric and n.link_local_only]
        if local_only:
            findings.append(
                Finding(
                    severity="warning",
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


_SKEW_FIELDS: dict[str, Callable[[HostFacts], str | None]] = {
    "driver": lambda f: f.gpu.driver_version,
    "CUDA": lambda f: f.gpu.cuda_version,
    "OS": lambda f: f.os.pretty_name,
    "DGX OTA": lambda f: f.os.dgx_ota_version,
    "kernel": lambda f: f.identity.kernel,
}


def skew_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    findings = []
    for label, read in _SKEW_FIELDS.items():
        values = {name: read(facts) for name, facts in hosts.items()}
        if len({v for v in values.values() if v is not None}) > 1:
            findings.append(
                Finding(
                    severity="warning",
                    kind="version_skew",
                    hosts=list(values),
                    message=f"{label} differs between hosts: "
                    + ", ".join(f"{name} {value or 'unknown'}" for name, value in values.items())
                    + "; align them before clustering",
                )
            )
    return findings


def toolkit_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    off_path = [n for n, f in hosts.items() if f.toolkit.nvcc_on_path is False]
    if not off_path:
        return []
    present = [n for n in off_path if hosts[n].toolkit.cuda_nvcc_present]
    message = f"nvcc is not on PATH on {', '.join(off_path)}"
    if present:
        message += (
            f"; /usr/local/cuda/bin/nvcc exists on {', '.join(present)} "
            "(export PATH=/usr/local/cuda/bin:$PATH for builds that need it)"
        )
    return [Finding(severity="info", kind="nvcc_off_path", hosts=off_path, message=message)]


def docker_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    findings = []
    for name, facts in hosts.items():
        docker = facts.docker
        if docker.installed is False:
            findings.append(
                Finding(
                    severity="blocker",
                    kind="docker_missing",
                    hosts=[name],
                    message=f"docker is not installed on {name}; install Docker CE and the "
                    "NVIDIA container toolkit",
                    evidence=[docker.problem or ""],
                )
            )
        elif docker.permission_denied:
            findings.append(
                Finding(
                    severity="blocker",
                    kind="docker_permission_denied",
                    hosts=[name],
                    message=f"docker on {name} refuses the user (permission denied on the "
                    "socket): add the user to the docker group (`sudo usermod -aG docker $USER`, "
                    "then log in again)",
                    evidence=[docker.problem or "", f"groups: {' '.join(docker.user_groups)}"],
                )
            )
        elif docker.installed and docker.usable is False:
            findings.append(
                Finding(
                    severity="blocker",
                    kind="docker_unusable",
                    hosts=[name],
                    message=f"docker on {name} cannot reach its daemon; start it "
                    "(`sudo systemctl start docker`) and check `docker info`",
                    evidence=[docker.problem or ""],
                )
            )
    return findings


_CHECKS: tuple[Callable[[Mapping[str, HostFacts]], list[Finding]], ...] = (
    link_findings,
    fabric_findings,
    skew_findings,
    toolkit_findings,
    docker_findings,
)
