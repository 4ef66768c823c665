"""The world model as compact text for the model (a few KB); the people's tables are in tables.py.

Both group what repeats (agent/world/grouping.py): hosts with the same facts are shown once,
findings that say the same about many hosts are said once. The model's text has a bound
(COMPACT_LIMIT_CHARS); what does not fit is named, with how to see it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agent.world.grouping import (
    FindingLine,
    HostGroup,
    HostShape,
    aggregate_findings,
    group_hosts,
    hosts_phrase,
    name_span,
)
from tools.checks import Finding, gb
from tools.world.facts import HostFacts
from tools.world.store import WorldStore

GIB = 1024**3
COMPACT_LIMIT_CHARS = 8000
GROUP_VALUES_CHARS = 400  # per group, the hosts' own values (hostname, addresses) up to this
ASK_FOR_HOSTS = 'recon with hosts=["NAME", …] shows those hosts one by one'


def gib_text(value: int | None) -> str:
    return "?" if value is None else f"{value / GIB:.1f} GiB"


def or_unknown(value: object) -> str:
    return "?" if value in (None, "") else str(value)


def _ipv4(addresses: list[str]) -> list[str]:
    return [a for a in addresses if ":" not in a]


def _identity(facts: HostFacts) -> str:
    """Architecture, OS, DGX release and kernel: the end of a host's first line."""
    ident, os_ = facts.identity, facts.os
    dgx = f" · DGX OS {os_.dgx_swbuild_version}" if os_.dgx_swbuild_version else ""
    if os_.dgx_ota_version:
        dgx += f" OTA {os_.dgx_ota_version}"
    return (
        f"{or_unknown(ident.arch)} · {or_unknown(os_.pretty_name)}{dgx} · "
        f"kernel {or_unknown(ident.kernel)}"
    )


def _detail_lines(facts: HostFacts, *, addresses: bool = True) -> list[str]:
    """Everything after a host's first line; `addresses=False` masks its fabric addresses."""
    gpu, mem = facts.gpu, facts.memory
    gpus = ", ".join(sorted({g.name for g in gpu.gpus})) or "no GPU seen"
    nvcc = {True: "nvcc on PATH", False: "nvcc off PATH", None: "nvcc ?"}[
        facts.toolkit.nvcc_on_path
    ]
    lines = [
        f"  GPU {len(gpu.gpus)}× {gpus}"
        + (f" ({gpu.interconnect_detail})" if gpu.interconnect_detail else "")
        + f" · driver {or_unknown(gpu.driver_version)} · "
        f"CUDA {or_unknown(gpu.cuda_version)} · {nvcc}"
    ]
    kind = "unified" if mem.unified_memory else "host"
    gpu_memory = ""
    if not mem.unified_memory and mem.gpu_total_bytes and mem.gpu_free_bytes is not None:
        used = (mem.gpu_total_bytes - mem.gpu_free_bytes) / 1024**3
        gpu_memory = f" · GPU memory {used:.1f}/{mem.gpu_total_bytes / 1024**3:.1f} GiB used"
    total, available = gib_text(mem.total_bytes), gib_text(mem.available_bytes)
    lines.append(
        f"  memory {kind} {total} total, {available} available"
        f"{gpu_memory} · budget {gib_text(mem.budget_bytes)}"
    )
    root = next((d for d in facts.disk.disks if d.mount == "/"), None)
    free = f"disk / {root.available_bytes / 1e12:.1f} TB free · " if root is not None else ""
    lines.append(f"  {free}{_hf_cache_text(facts)}")
    lines.append("  " + _docker_line(facts))
    lines.append("  " + _fabric_line(facts, addresses=addresses))
    servers = ", ".join(
        s.kind + (f":{s.port}" if s.port else "") + (f" ({s.container})" if s.container else "")
        for s in facts.services.inference_servers
    )
    packages = ", ".join(f"{k} {v}" for k, v in facts.python.packages.items()) or "none"
    lines.append(
        f"  python {or_unknown(facts.python.version)} (inference pkgs: {packages})"
        f" · servers: {servers or 'none'}{facts.kits.words(facts.host)}"
    )
    return lines


def host_block(facts: HostFacts) -> list[str]:
    """A few lines per host: what a planner needs, unknowns shown as '?'."""
    first = f"{facts.host} ({or_unknown(facts.identity.hostname)}) {_identity(facts)}"
    return [first, *_detail_lines(facts)]


def _fabric_addresses(facts: HostFacts) -> str:
    nics = {n.name: n for n in facts.network.interfaces}
    found = [
        a
        for port in facts.rdma.ports
        if port.up and port.netdev in nics
        for a in _ipv4(nics[port.netdev].addresses)
    ]
    return " ".join(dict.fromkeys(found))


def host_shape(facts: HostFacts) -> HostShape:
    """The host as its copies would read it: own name, hostname and addresses set aside."""
    shared = (_identity(facts), *_detail_lines(facts, addresses=False))
    own = {"hostname": or_unknown(facts.identity.hostname), "addresses": _fabric_addresses(facts)}
    return HostShape(facts.host, shared, own)


def _group_block(group: HostGroup, order: Sequence[str]) -> list[str]:
    """A group of hosts as one block: who they are, what differs, then their shared lines."""
    differ = f"; differ in: {', '.join(group.differ)}" if group.differ else ""
    who = f"{name_span(group.members, order)} ({len(group.members)} hosts{differ})"
    lines = [f"{who} {group.shared[0]}", *group.shared[1:]]
    if not group.differ:
        return lines
    shown, used = [], 0
    for host in group.members:
        own = " ".join(group.values[host][k] for k in group.differ if group.values[host][k])
        if used + len(host) + len(own) + 3 > GROUP_VALUES_CHARS:
            break
        shown.append(f"{host} {own}")
        used += len(host) + len(own) + 3
    rest = len(group.members) - len(shown)
    more = f"; +{rest} more ({ASK_FOR_HOSTS})" if rest else ""
    lines.append(f"  per host: {'; '.join(shown)}{more}")
    return lines


def _hf_cache_text(facts: HostFacts, shown: int = 4) -> str:
    """Cached models with sizes, revisions (7 characters, as git shortens them) and unfinished
    downloads, at most `shown` of them (the rest counted)."""
    cache = facts.hf_cache
    models = cache.models
    if models is None:
        return "HF cache ?"
    if not models:
        return "HF cache: no models"
    listed = []
    for model, size in sorted(models.items()):
        copy = cache.copies.get(model)
        revision = f" @{copy.revision[:7]}" if copy and copy.revision else ""
        unfinished = (
            f" ({copy.incomplete_blobs} .incomplete)" if copy and copy.incomplete_blobs else ""
        )
        listed.append(f"{model} {gb(size) if size is not None else '?'}{revision}{unfinished}")
    more = f", +{len(listed) - shown} more" if len(listed) > shown else ""
    return "HF cache: " + ", ".join(listed[:shown]) + more


def _docker_line(facts: HostFacts) -> str:
    docker = facts.docker
    if docker.installed is False:
        return "docker: not installed"
    if docker.permission_denied:
        return "docker: permission denied (user not in docker group)"
    if not docker.usable:
        return f"docker: unusable ({or_unknown(docker.problem)})"
    parts = []
    for c in docker.containers:
        held = f", holds ~{gb(c.memory_bytes)}" if c.memory_bytes else ""
        own = f" (started by Scout: {c.started_by_scout})" if c.started_by_scout else ""
        parts.append(f"{c.name} [{c.image}] {c.status or c.state}{own}{held}")
    line = f"docker {docker.server_version}: " + ("; ".join(parts) or "no containers")
    asked = [
        f"image {i.repository}:{i.tag or 'latest'}: {i.contents.words()}"
        for i in docker.images
        if i.contents is not None
    ]
    return "; ".join([line, *asked])


def _fabric_line(facts: HostFacts, *, addresses: bool = True) -> str:
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
        if addrs and not addresses:
            addrs = "(address per host)"
        up.append(f"{port.device}→{port.netdev} Up{speed} {addrs or 'no IPv4'}".rstrip())
    text = "fabric: " + ("; ".join(up) if up else "NO PORT UP")
    return text + (f"; down: {', '.join(down)}" if down else "")


def _finding_text(line: FindingLine) -> str:
    return f"  [{line.severity}] {line.message}"


def host_order(world: WorldStore, names: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*names, *world.hosts, *world.unreachable]))


def render_compact(
    world: WorldStore, hosts: Iterable[str] | None = None, new: Sequence[Finding] = ()
) -> str:
    """The model's view: one block per host (or per group of hosts with the same facts),
    unreachable hosts, notes, findings, then those of them `new` since the last look; at most
    COMPACT_LIMIT_CHARS."""
    names = list(hosts) if hosts is not None else list(world.hosts)
    order = host_order(world, names)
    shapes = [host_shape(world.hosts[name]) for name in names if name in world.hosts]
    blocks = [
        (host_block(world.hosts[g.members[0]]) if g.single else _group_block(g, order), g.members)
        for g in group_hosts(shapes)
    ]
    middle: list[str] = []
    for name, reason in world.unreachable.items():
        if name in names:
            middle.append(f"{name}: UNREACHABLE — {reason}")
    if world.notes:
        middle.append("notes (model beliefs, not probed):")
        middle += [
            f"  - {n.host + ': ' if n.host else ''}{n.belief} [{n.evidence}]" for n in world.notes
        ]
    for endpoint in world.endpoints.values():
        middle.append(
            f"endpoint {endpoint.where}: {endpoint.model}, {endpoint.single_stream_tok_s} tok/s "
            f"single stream, {endpoint.aggregate_tok_s} tok/s at {endpoint.concurrency} streams"
        )
    for test in world.fabric_tests.values():
        middle.append(
            f"fabric measured from {test.host} ({test.test}, ranks on {', '.join(test.nodes)}): "
            f"{test.busbw_gb_s:g} GB/s bus bandwidth ({test.busbw_gb_s * 8:.0f} Gb/s; the link "
            f"is {test.link_gbit:.0f} Gb/s)"
        )
    if world.jobs:  # the jobs' views read their logs' progress: loaded only when there are jobs
        from agent.world.jobs_view import compact_job_lines

        middle += compact_job_lines(world.jobs, names)
    relevant = [f for f in world.findings if set(f.hosts) & set(names)] if names else []
    findings = aggregate_findings(relevant, order)
    return _bounded(blocks, middle, findings, aggregate_findings(new, order), order)


def _bounded(
    blocks: list[tuple[list[str], list[str]]],
    middle: list[str],
    findings: list[FindingLine],
    new: list[FindingLine],
    order: Sequence[str],
) -> str:
    """Join the parts; past COMPACT_LIMIT_CHARS drop the new findings' lines first (each also
    stands among the findings), then host blocks from the end (never the first), then findings
    that are not blockers, and say what was dropped and how to see it."""
    shown, hidden_hosts = list(blocks), []
    kept, hidden_findings = list(findings), []
    fresh, hidden_fresh = list(new), 0

    def text() -> str:
        lines = [line for block, _members in shown for line in block]
        if hidden_hosts:
            lines.append(
                f"({hosts_phrase(hidden_hosts, order)} not shown to keep this short; "
                f"{ASK_FOR_HOSTS})"
            )
        lines += middle
        lines.append("findings:" if kept or hidden_findings else "findings: none")
        lines += [_finding_text(line) for line in kept]
        if hidden_findings:
            counts = ", ".join(
                f"{sum(f.severity == s for f in hidden_findings)} {s}"
                for s in ("warning", "info")
                if any(f.severity == s for f in hidden_findings)
            )
            lines.append(
                f"  ({len(hidden_findings)} more findings not shown ({counts}); recon with "
                'hosts=["NAME", …] lists the findings about those hosts)'
            )
        if fresh or hidden_fresh:
            lines.append("new since the last recon:")
            lines += [_finding_text(line) for line in fresh]
        if hidden_fresh:
            lines.append(f"  (+{hidden_fresh} more new, among the findings above)")
        return "\n".join(lines)

    while len(text()) > COMPACT_LIMIT_CHARS and fresh:
        fresh.pop()
        hidden_fresh += 1
    while len(text()) > COMPACT_LIMIT_CHARS and len(shown) > 1:
        hidden_hosts[:0] = shown.pop()[1]
    while len(text()) > COMPACT_LIMIT_CHARS:
        droppable = [i for i, f in enumerate(kept) if f.severity != "blocker"]
        if not droppable:
            break
        hidden_findings.insert(0, kept.pop(droppable[-1]))
    return text()
