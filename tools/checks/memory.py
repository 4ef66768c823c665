"""Memory: what each host can give a model, who holds memory now, and whether a model fits.

On unified memory (GB10) the budget is /proc/meminfo's MemAvailable, and a model is split evenly
across every host that reported a budget.
"""

from __future__ import annotations

from collections.abc import Mapping

from tools.checks.finding import GB, Finding, gb
from tools.recon.facts import HostFacts

PAGE_CACHE_WARN_BYTES = 10 * GB
CHECK = "memory"


def running_with_memory(facts: HostFacts) -> list[tuple[str, int]]:
    """(name, bytes) of each running container that holds memory."""
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
        for container, held in running_with_memory(facts):
            findings.append(
                Finding(
                    severity="warning",
                    check=CHECK,
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
                    check=CHECK,
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
            check=CHECK,
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
        holders = running_with_memory(hosts[name])
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
                check=CHECK,
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
                check=CHECK,
                kind="model_exceeds_cluster",
                hosts=list(known),
                message=f"a ~{gb(size)} model exceeds the {gb(total)} available on {where}",
            )
        )
    elif len(known) > 1 and max(known.values()) < size:
        findings.append(
            Finding(
                severity="info",
                check=CHECK,
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
