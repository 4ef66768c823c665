"""Memory: what each host can give a model, who holds memory now, and whether a model fits.

A container Scout started itself (its engine) is its work, not a warning: the memory it holds
counts in the budget, but it is not listed as holding memory against Scout.

On unified memory (GB10) the budget is /proc/meminfo's MemAvailable. Whether a model fits is
decided by the layout chooser (tools/checks/layout.py): the fewest nodes that hold it, the first
host (the head) always among them; a node of that set that cannot hold its share now is a blocker
for that node, whatever the number of hosts probed.
"""

from __future__ import annotations

from collections.abc import Mapping

from tools.checks.budget import budgets_for, default_utilization, running_with_memory
from tools.checks.fabric import pair_link
from tools.checks.fit_rule import NodeFit
from tools.checks.layout import Layout, LayoutRequest, choose_layout
from tools.world.facts import HostFacts
from tools.world.findings import GB, Finding, gb

PAGE_CACHE_WARN_BYTES = 10 * GB
CHECK = "memory"


def memory_findings(hosts: Mapping[str, HostFacts], model_size_bytes: int | None) -> list[Finding]:
    """Per-host budget; with a model size, whether it fits (split evenly across all hosts)."""
    findings: list[Finding] = []
    budgets = {name: f.memory.budget_bytes for name, f in hosts.items()}
    for name, facts in hosts.items():
        own = {c.name for c in facts.docker.containers if c.started_by_scout}
        for container, held in running_with_memory(facts):
            if container in own:
                continue
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
        findings += _page_cache_findings(name, facts) + _cut_process_findings(name, facts)
    if model_size_bytes is not None:
        findings += _fit_findings(hosts, budgets, model_size_bytes)
    return findings


def _cut_process_findings(name: str, facts: HostFacts) -> list[Finding]:
    """GPU processes whose memory nvidia-smi cut (`10707...`): they hold memory, amount unknown."""
    return [
        Finding(
            severity="warning",
            check=CHECK,
            kind="gpu_process_holds_memory",
            hosts=[name],
            message=f"{proc.name} (pid {proc.pid}) holds GPU memory on {name}; nvidia-smi cut "
            "the amount, so it is unknown but large (100000 MiB or more)",
            evidence=[f"{s.host}: {s.command}" for s in facts.gpu.sources[:1]],
        )
        for proc in facts.gpu.processes
        if proc.memory_cut
    ]


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
    total = sum(known.values())
    if total < size:
        where = f"all {len(known)} hosts together" if len(known) > 1 else next(iter(known))
        return [
            Finding(
                severity="blocker",
                check=CHECK,
                kind="model_exceeds_cluster",
                hosts=list(known),
                message=f"a ~{gb(size)} model exceeds the {gb(total)} available on {where}",
            )
        ]
    nodes = budgets_for(hosts, list(known))
    # the fraction a plan on these nodes would use, so recon and the plan quote one verdict
    request = LayoutRequest(size, utilization=default_utilization(nodes))
    layout = choose_layout(request, nodes, lambda a, b: pair_link(hosts[a], hosts[b]))
    findings = [
        _short_of_memory(hosts[v.host], known[v.host], size, layout, v)
        for v in layout.verdicts
        if v.state != "fits"
    ]
    if layout.fits and len(layout.hosts) > 1:
        findings.append(_needs_nodes(size, layout))
    return findings


def _short_of_memory(
    facts: HostFacts, budget: int, size: int, layout: Layout, verdict: NodeFit
) -> Finding:
    """A node the model needs that cannot hold its share now: who holds the memory, if anyone."""
    name, count = facts.host, len(layout.hosts)
    holders = running_with_memory(facts)
    if holders:
        held = ", ".join(f"{c} holds ~{gb(b)}" for c, b in holders)
        message = f"a ~{gb(size)} model cannot start while {held} on {name}: {gb(budget)} available"
    else:
        message = f"a ~{gb(size)} model does not fit on {name}: {gb(budget)} available"
    needs = []
    if count > 1:
        needs.append(f"needs ~{gb(round(layout.share_bytes))} per node split over {count} nodes")
    if budget >= layout.share_bytes or count == 1:
        needs.append(f"plus KV headroom at memory utilization {verdict.utilization:g}")
    if needs:
        message += f" ({', '.join(needs)})"
    return Finding(
        severity="blocker",
        check=CHECK,
        kind="model_does_not_fit",
        hosts=[name],
        message=message,
        evidence=_memory_evidence(facts),
        fit=[verdict.claim()],
    )


def _needs_nodes(size: int, layout: Layout) -> Finding:
    """Which nodes the model needs: all of them, or the fewest that hold it (named)."""
    count = len(layout.hosts)
    split = "tensor parallelism" if layout.pipeline_parallel == 1 else layout.label
    if layout.chose_subset:
        needs = (
            f"it needs {count} of the {layout.of_nodes} nodes ({', '.join(layout.hosts)}) "
            f"with {split} across them"
        )
    else:
        needs = f"it needs {split} across {count} nodes"
    return Finding(
        severity="info",
        check=CHECK,
        kind="model_needs_all_nodes" if not layout.chose_subset else "model_needs_nodes",
        hosts=list(layout.hosts),
        message=f"a ~{gb(size)} model fits on no single host; {needs}",
        fit=[v.claim() for v in layout.verdicts],
    )


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
