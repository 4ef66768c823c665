"""The world model for people: hosts, containers, fabric and findings as rich tables, one row
per host or per group of hosts with the same facts (agent/world/grouping.py)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from agent.world.grouping import FindingLine, HostGroup, aggregate_findings, group_hosts, name_span
from agent.world.render import gib_text, host_order, host_shape, or_unknown
from tools.checks import gb
from tools.world.facts import HostFacts, MemoryFacts
from tools.world.store import WorldStore

_SEVERITY_STYLES = {"blocker": "bold red", "warning": "yellow", "info": "cyan", "ok": "green"}


def print_tables(world: WorldStore, console: Console) -> None:
    """The people's view: hosts, containers, fabric and findings as tables, one row per host
    or per group of hosts with the same facts."""
    order = host_order(world, list(world.hosts))
    groups = group_hosts([host_shape(facts) for facts in world.hosts.values()])
    console.print(_hosts_table(world, groups, order))
    containers = _containers_table(world, groups, order)
    if containers.row_count:
        console.print(containers)
    console.print(_fabric_table(world, groups, order))
    for name, reason in world.unreachable.items():
        console.print(f"[bold red]{name}: unreachable[/] — {reason}")
    if world.notes:
        console.print("[bold]notes[/] (model beliefs, not probed)")
        for note in world.notes:
            console.print(f"  {note.host or '-'}: {note.belief} [{note.evidence}]")
    console.print(_findings_table(aggregate_findings(world.findings, order), order))


def grouping_data(world: WorldStore) -> dict[str, list[dict[str, object]]]:
    """The grouping as data, for `scout recon --json` next to the per-host facts."""
    order = host_order(world, list(world.hosts))
    groups = group_hosts([host_shape(facts) for facts in world.hosts.values()])
    return {
        "host_groups": [{"hosts": g.members, "differ_in": g.differ} for g in groups],
        "findings": [
            {"severity": f.severity, "kind": f.kind, "hosts": f.hosts, "message": f.message}
            for f in aggregate_findings(world.findings, order)
        ],
    }


def _label(group: HostGroup, order: Sequence[str]) -> str:
    if group.single:
        return group.members[0]
    return f"{name_span(group.members, order)} ({len(group.members)} hosts)"


def _memory_cell(memory: MemoryFacts) -> str:
    """What a model can use, as the budget counts it: unified memory on a GB10, else the GPU
    memory an engine can use (MIG: an instance), with the host's RAM named as such."""
    ram = f"{gib_text(memory.total_bytes)} total, {gib_text(memory.available_bytes)} avail"
    if memory.unified_memory:
        return f"{ram} (unified)"
    if memory.gpu_total_bytes is None or memory.gpu_free_bytes is None:
        return f"host RAM {ram}"
    return (
        f"GPU {gib_text(memory.gpu_free_bytes)} free of {gib_text(memory.gpu_total_bytes)}"
        f" · host RAM {gib_text(memory.total_bytes)}"
    )


def _hosts_table(world: WorldStore, groups: list[HostGroup], order: Sequence[str]) -> Table:
    table = Table(title="hosts")
    for column in ("host", "hostname", "arch", "OS / DGX", "GPU", "driver", "CUDA", "memory"):
        table.add_column(column)
    for group in groups:
        f = world.hosts[group.members[0]]
        dgx = f.os.dgx_ota_version or f.os.dgx_swbuild_version
        mem = _memory_cell(f.memory)
        hostname = "(per host)" if "hostname" in group.differ else f.identity.hostname
        table.add_row(
            _label(group, order),
            or_unknown(hostname),
            or_unknown(f.identity.arch),
            f"{or_unknown(f.os.pretty_name)}" + (f" / {dgx}" if dgx else ""),
            ", ".join(sorted({g.name for g in f.gpu.gpus})) or "-",
            or_unknown(f.gpu.driver_version),
            or_unknown(f.gpu.cuda_version),
            mem,
        )
    return table


def _containers_table(world: WorldStore, groups: list[HostGroup], order: Sequence[str]) -> Table:
    table = Table(title="containers")
    for column in ("host", "name", "image", "status", "memory held"):
        table.add_column(column)
    for group in groups:
        for c in world.hosts[group.members[0]].docker.containers:
            held = f"~{gb(c.memory_bytes)}" if c.memory_bytes else "?"
            status = or_unknown(c.status or c.state)
            table.add_row(_label(group, order), c.name, c.image, status, held)
    return table


def _fabric_table(world: WorldStore, groups: list[HostGroup], order: Sequence[str]) -> Table:
    table = Table(title="fabric (RDMA ports)")
    for column in ("host", "device", "netdev", "state", "speed", "addresses"):
        table.add_column(column)
    for group in groups:
        f = world.hosts[group.members[0]]
        nics = {n.name: n for n in f.network.interfaces}
        for port in f.rdma.ports:
            nic = nics.get(port.netdev or "")
            speed = f"{nic.speed_mbps // 1000}G" if nic and nic.speed_mbps else "-"
            state = " ".join(s for s in (port.state, port.physical_state) if s)
            style = "green" if port.up else "red"
            seen = {_addresses(world.hosts[m], port.netdev) for m in group.members}
            table.add_row(
                _label(group, order),
                port.device,
                or_unknown(port.netdev),
                f"[{style}]{state}[/]",
                speed,
                seen.pop() if len(seen) == 1 else "(per host)",
            )
    return table


def _addresses(facts: HostFacts, netdev: str | None) -> str:
    nic = next((n for n in facts.network.interfaces if n.name == netdev), None)
    return " ".join(nic.addresses) if nic else "-"


def _findings_table(findings: list[FindingLine], order: Sequence[str]) -> Table:
    table = Table(title="findings")
    for column in ("severity", "hosts", "finding"):
        table.add_column(column)
    for f in findings:
        style = _SEVERITY_STYLES[f.severity]
        hosts = name_span(f.hosts, order) if len(f.hosts) > 2 else ", ".join(f.hosts)
        table.add_row(f"[{style}]{f.severity}[/]", hosts, f.message)
    return table
