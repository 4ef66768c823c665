"""The world model two ways: compact text for the model (a few KB), rich tables for people."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.table import Table

from tools.checks import Finding, gb
from tools.recon.facts import HostFacts
from tools.world_store import WorldStore

GIB = 1024**3
_SEVERITY_STYLES = {"blocker": "bold red", "warning": "yellow", "info": "cyan", "ok": "green"}


def _gib(value: int | None) -> str:
    return "?" if value is None else f"{value / GIB:.1f} GiB"


def _or_unknown(value: object) -> str:
    return "?" if value in (None, "") else str(value)


def _ipv4(addresses: list[str]) -> list[str]:
    return [a for a in addresses if ":" not in a]


def host_block(facts: HostFacts) -> list[str]:
    """A few lines per host: what a planner needs, unknowns shown as '?'."""
    ident, os_, gpu, mem = facts.identity, facts.os, facts.gpu, facts.memory
    dgx = f" · DGX OS {os_.dgx_swbuild_version}" if os_.dgx_swbuild_version else ""
    if os_.dgx_ota_version:
        dgx += f" OTA {os_.dgx_ota_version}"
    lines = [
        f"{facts.host} ({_or_unknown(ident.hostname)}) {_or_unknown(ident.arch)} · "
        f"{_or_unknown(os_.pretty_name)}{dgx} · kernel {_or_unknown(ident.kernel)}"
    ]
    gpus = ", ".join(sorted({g.name for g in gpu.gpus})) or "no GPU seen"
    nvcc = {True: "nvcc on PATH", False: "nvcc off PATH", None: "nvcc ?"}[
        facts.toolkit.nvcc_on_path
    ]
    lines.append(
        f"  GPU {len(gpu.gpus)}× {gpus} · driver {_or_unknown(gpu.driver_version)} · "
        f"CUDA {_or_unknown(gpu.cuda_version)} · {nvcc}"
    )
    kind = "unified" if mem.unified_memory else "host"
    lines.append(
        f"  memory {kind} {_gib(mem.total_bytes)} total, {_gib(mem.available_bytes)} available"
        f" · budget {_gib(mem.budget_bytes)}"
    )
    root = next((d for d in facts.disk.disks if d.mount == "/"), None)
    free = f"disk / {root.available_bytes / 1e12:.1f} TB free · " if root is not None else ""
    lines.append(f"  {free}{_hf_cache_text(facts)}")
    lines.append("  " + _docker_line(facts))
    lines.append("  " + _fabric_line(facts))
    servers = ", ".join(
        f"{s.kind}:{s.port}" + (f" ({s.container})" if s.container else "")
        for s in facts.services.inference_servers
    )
    packages = ", ".join(f"{k} {v}" for k, v in facts.python.packages.items()) or "none"
    lines.append(
        f"  python {_or_unknown(facts.python.version)} (inference pkgs: {packages})"
        f" · servers: {servers or 'none'}"
    )
    return lines


def _hf_cache_text(facts: HostFacts, shown: int = 4) -> str:
    """Cached models with sizes, at most `shown` of them (the rest counted)."""
    models = facts.hf_cache.models
    if models is None:
        return "HF cache ?"
    if not models:
        return "HF cache: no models"
    listed = [f"{m} {gb(b) if b is not None else '?'}" for m, b in sorted(models.items())]
    more = f", +{len(listed) - shown} more" if len(listed) > shown else ""
    return "HF cache: " + ", ".join(listed[:shown]) + more


def _docker_line(facts: HostFacts) -> str:
    docker = facts.docker
    if docker.installed is False:
        return "docker: not installed"
    if docker.permission_denied:
        return "docker: permission denied (user not in docker group)"
    if not docker.usable:
        return f"docker: unusable ({_or_unknown(docker.problem)})"
    parts = []
    for c in docker.containers:
        held = f", holds ~{gb(c.memory_bytes)}" if c.memory_bytes else ""
        parts.append(f"{c.name} [{c.image}] {c.status or c.state}{held}")
    return f"docker {docker.server_version}: " + ("; ".join(parts) or "no containers")


def _fabric_line(facts: HostFacts) -> str:
    if facts.rdma.problem and not facts.rdma.ports:
        return f"fabric: ? ({facts.rdma.problem[:80]})"
    if not facts.rdma.ports:
        return "fabric: no RDMA devices"
    nics = {n.name: n for n in facts.network.interfaces}
    up, down = [], []
    for port in facts.rdma.ports:
        nic = nics.get(port.netdev or "")
        if not port.up:
            down.append(port.device + (" (no carrier)" if nic and nic.carrier is False else ""))
            continue
        speed = f" {nic.speed_mbps // 1000}G" if nic and nic.speed_mbps else ""
        addrs = " ".join(_ipv4(nic.addresses)) if nic else ""
        up.append(f"{port.device}→{port.netdev} Up{speed} {addrs or 'no IPv4'}".rstrip())
    text = "fabric: " + ("; ".join(up) if up else "NO PORT UP")
    return text + (f"; down: {', '.join(down)}" if down else "")


def finding_lines(findings: Iterable[Finding]) -> list[str]:
    return [f"  [{f.severity}] {f.text}" for f in findings]


def render_compact(world: WorldStore, hosts: Iterable[str] | None = None) -> str:
    """The model's view: one block per host, unreachable hosts, notes, then findings."""
    names = list(hosts) if hosts is not None else list(world.hosts)
    lines: list[str] = []
    for name in names:
        if name in world.hosts:
            lines += host_block(world.hosts[name])
    for name, reason in world.unreachable.items():
        if name in names:
            lines.append(f"{name}: UNREACHABLE — {reason}")
    if world.notes:
        lines.append("notes (model beliefs, not probed):")
        lines += [
            f"  - {n.host + ': ' if n.host else ''}{n.belief} [{n.evidence}]" for n in world.notes
        ]
    for endpoint in world.endpoints.values():
        lines.append(
            f"endpoint {endpoint.where}: {endpoint.model}, {endpoint.single_stream_tok_s} tok/s "
            f"single stream, {endpoint.aggregate_tok_s} tok/s at {endpoint.concurrency} streams"
        )
    relevant = [f for f in world.findings if set(f.hosts) & set(names)] if names else []
    lines.append("findings:" if relevant else "findings: none")
    lines += finding_lines(relevant)
    return "\n".join(lines)


def print_tables(world: WorldStore, console: Console) -> None:
    """The people's view: hosts, containers, fabric and findings as tables."""
    console.print(_hosts_table(world))
    containers = _containers_table(world)
    if containers.row_count:
        console.print(containers)
    console.print(_fabric_table(world))
    for name, reason in world.unreachable.items():
        console.print(f"[bold red]{name}: unreachable[/] — {reason}")
    if world.notes:
        console.print("[bold]notes[/] (model beliefs, not probed)")
        for note in world.notes:
            console.print(f"  {note.host or '-'}: {note.belief} [{note.evidence}]")
    console.print(_findings_table(world.findings))


def _hosts_table(world: WorldStore) -> Table:
    table = Table(title="hosts")
    for column in ("host", "hostname", "arch", "OS / DGX", "GPU", "driver", "CUDA", "memory"):
        table.add_column(column)
    for name, f in world.hosts.items():
        dgx = f.os.dgx_ota_version or f.os.dgx_swbuild_version
        mem = f"{_gib(f.memory.total_bytes)} total, {_gib(f.memory.available_bytes)} avail"
        if f.memory.unified_memory:
            mem += " (unified)"
        table.add_row(
            name,
            _or_unknown(f.identity.hostname),
            _or_unknown(f.identity.arch),
            f"{_or_unknown(f.os.pretty_name)}" + (f" / {dgx}" if dgx else ""),
            ", ".join(sorted({g.name for g in f.gpu.gpus})) or "-",
            _or_unknown(f.gpu.driver_version),
            _or_unknown(f.gpu.cuda_version),
            mem,
        )
    return table


def _containers_table(world: WorldStore) -> Table:
    table = Table(title="containers")
    for column in ("host", "name", "image", "status", "memory held"):
        table.add_column(column)
    for name, f in world.hosts.items():
        for c in f.docker.containers:
            held = f"~{gb(c.memory_bytes)}" if c.memory_bytes else "?"
            table.add_row(name, c.name, c.image, _or_unknown(c.status or c.state), held)
    return table


def _fabric_table(world: WorldStore) -> Table:
    table = Table(title="fabric (RDMA ports)")
    for column in ("host", "device", "netdev", "state", "speed", "addresses"):
        table.add_column(column)
    for name, f in world.hosts.items():
        nics = {n.name: n for n in f.network.interfaces}
        for port in f.rdma.ports:
            nic = nics.get(port.netdev or "")
            speed = f"{nic.speed_mbps // 1000}G" if nic and nic.speed_mbps else "-"
            state = " ".join(s for s in (port.state, port.physical_state) if s)
            style = "green" if port.up else "red"
            table.add_row(
                name,
                port.device,
                _or_unknown(port.netdev),
                f"[{style}]{state}[/]",
                speed,
                " ".join(nic.addresses) if nic else "-",
            )
    return table


def _findings_table(findings: list[Finding]) -> Table:
    table = Table(title="findings")
    for column in ("severity", "hosts", "finding"):
        table.add_column(column)
    for f in findings:
        style = _SEVERITY_STYLES[f.severity]
        table.add_row(f"[{style}]{f.severity}[/]", ", ".join(f.hosts), f.text)
    return table
