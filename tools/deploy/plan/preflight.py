"""Preflight: every condition a multi-node launch needs, checked on the world model's facts.

Each finding is ok / warning / blocker with a message and what to do. The fact checks come from
the shared registry (tools/checks: RDMA devices, docker, versions); the checks here need the
chosen deployment: its layout (which nodes, TP × PP: tools/checks/layout.py), reachable nodes,
its fabric path, image, ports, fit, and weights (tools/deploy/plan/weights.py). The caller re-probes
stale hosts first. Checks only compute; nothing here changes a host.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tools.checks import Finding, Severity, by_severity, preflight_findings
from tools.checks.budget import budgets_for
from tools.checks.fabric import pair_link
from tools.checks.gpu_health import for_a_plan
from tools.checks.layout import Layout, LayoutError, LayoutRequest, choose_layout
from tools.checks.memory import memory_findings
from tools.deploy.choices import PIPELINE_FLAGS, DeployChoices
from tools.deploy.fabric.netplan import NETPLAN_FILE
from tools.deploy.fabric.paths import FabricError, FabricPath, find_fabric
from tools.deploy.launch.engine_settings import choose_max_model_len, choose_utilization, context_kv
from tools.deploy.plan.fit import FitVerdict, check_fit
from tools.deploy.plan.weights import weights_findings
from tools.deploy.recipe_book.model_shape import KvShape
from tools.world.facts import HostFacts
from tools.world.findings import FitClaim


def _finding(
    check: str,
    severity: Severity,
    kind: str,
    message: str,
    hosts: list[str],
    fix: str | None = None,
    *,
    needs_person: bool = False,
    fit: list[FitClaim] | None = None,
) -> Finding:
    return Finding(
        severity=severity,
        check=check,
        kind=kind,
        hosts=hosts,
        message=message,
        fix=fix,
        needs_person=needs_person,
        fit=fit or [],
    )


@dataclass
class PreflightReport:
    """The findings, and for a plan: the fabric paths, the fit, the layout and the choices
    resolved to the layout's nodes (`choices.hosts` are the nodes the plan uses)."""

    findings: list[Finding]
    fabric: dict[str, FabricPath] | None
    fit: FitVerdict | None
    choices: DeployChoices
    layout: Layout | None = None
    settings: tuple[str, ...] = ()  # why the engine's memory flags have their values

    @property
    def blockers(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "blocker"]

    @property
    def ok(self) -> bool:
        return not self.blockers

    def render(self) -> str:
        return "\n".join(f.line() for f in by_severity(self.findings))


@dataclass
class PreflightInput:
    """What preflight reads: facts per host, hosts that did not answer, the model's size and,
    when the Hub was asked, its current commit (the weights check wants every copy at it)."""

    hosts: Mapping[str, HostFacts]
    unreachable: Mapping[str, str] = field(default_factory=dict)
    model_size_bytes: int | None = None
    cached_bytes: Mapping[str, int | None] = field(default_factory=dict)
    links_tried: frozenset[str] = frozenset()
    hub_revision: str | None = None
    kv_shape: KvShape | None = None  # the model's KV cost (recipe_book/model_shape.py)
    context_target: int | None = None  # the recipe's max_model_len
    kv_element_bytes: int = 2  # 1 with `--kv-cache-dtype fp8`


def run_preflight(data: PreflightInput, choices: DeployChoices) -> PreflightReport:
    """All checks for `choices` (not yet resolved: the layout picks the nodes), blockers first."""
    present = [h for h in choices.hosts if h in data.hosts and h not in data.unreachable]
    if choices.head not in present:
        return PreflightReport([_reachable(data, choices)], None, None, choices.resolved())
    utilization, why_utilization = choose_utilization(
        budgets_for(data.hosts, present), choices.gpu_memory_utilization
    )
    choices = choices.model_copy(update={"gpu_memory_utilization": utilization})
    layout_finding, layout = _layout(data, choices, present)
    if layout_finding is not None and layout_finding.severity == "blocker":
        # a host left out for its GPUs: say what happened to them
        why = preflight_findings({h: data.hosts[h] for h in present})["gpu"]
        faults = [f for f in for_a_plan(why) if f.severity != "ok"]
        return PreflightReport([layout_finding, *faults], None, None, choices.resolved())
    resolved = choices.with_layout(layout) if layout else choices.resolved()
    missing = [h for h in resolved.hosts if h not in present]
    if missing:
        return PreflightReport([_reachable(data, choices)], None, None, resolved)
    reach = _reachable(data, choices)
    if reach.severity == "blocker":  # hosts the layout leaves out; its line names them
        reach = _reachable(data, resolved)
    findings = [reach, *([layout_finding] if layout_finding else [])]
    hosts = {h: data.hosts[h] for h in resolved.hosts}
    shared = preflight_findings(hosts)
    fabric_finding, fabric = _fabric(hosts, resolved, data.links_tried)
    findings += [*shared["rdma"], fabric_finding, *_mtu(hosts, fabric)]
    findings += [*shared["docker"], _image(hosts, resolved)]
    findings += _ports(hosts, resolved)
    fit = None
    settings = [why_utilization]
    if data.model_size_bytes:
        budgets = budgets_for(hosts, resolved.hosts)
        fit = check_fit(data.model_size_bytes, budgets, utilization, _context_kv(data, choices))
        findings.append(fit.finding())
        kv_left = min((v.usable_freed - v.need.weights for v in fit.verdicts), default=0)
        length, why_length = choose_max_model_len(
            max(kv_left, 0),
            len(resolved.hosts),
            resolved.max_model_len,
            data.kv_shape,
            data.context_target,
            data.kv_element_bytes,
        )
        resolved = resolved.model_copy(update={"max_model_len": length})
        settings.append(why_length)
        findings += weights_findings(
            hosts, resolved, data.model_size_bytes, data.cached_bytes, data.hub_revision
        )
    findings += [*shared["versions"], *for_a_plan(shared["gpu"]), *shared["leftovers"]]
    findings += [f for f in memory_findings(hosts, None) if f.kind == "page_cache_inflated"]
    return PreflightReport(by_severity(findings), fabric, fit, resolved, layout, tuple(settings))


def _layout(
    data: PreflightInput, choices: DeployChoices, present: list[str]
) -> tuple[Finding | None, Layout | None]:
    """The nodes and split for the model: a `layout` finding (ok with its reason, or a blocker)
    and the layout; without a model size the hosts given are used (or `nodes` of them)."""
    nodes = choices.nodes
    if not data.model_size_bytes:
        nodes = nodes or len(choices.hosts)
        if nodes > len(present) and len(present) < len(choices.hosts):
            return _reachable(data, choices), None
    request = LayoutRequest(
        size_bytes=data.model_size_bytes or 0,
        utilization=choices.gpu_memory_utilization,
        nodes=nodes,
        tensor_parallel=choices.tensor_parallel,
        pipeline_parallel=choices.pipeline_parallel,
        pipeline_ok=choices.recipe in PIPELINE_FLAGS,
        context_kv_bytes=_context_kv(data, choices),
    )
    hosts = data.hosts
    try:
        layout = choose_layout(
            request, budgets_for(hosts, present), lambda a, b: pair_link(hosts[a], hosts[b])
        )
    except LayoutError as exc:
        return _finding("layout", "blocker", "layout_impossible", str(exc), choices.hosts), None
    absent = [h for h in choices.hosts if h not in present]
    if absent and not layout.fits:  # the hosts that did not answer might have made it fit
        return _reachable(data, choices), None
    message = layout.reason
    if absent:
        message += f" ({', '.join(absent)} did not answer and is left out)"
    # a layout that does not hold the model is no `ok`: the memory blocker says why
    severity, kind = ("ok", "layout_chosen") if layout.fits else ("info", "layout_short")
    claims = [v.claim() for v in layout.verdicts]
    return _finding("layout", severity, kind, message, list(layout.hosts), fit=claims), layout


def _context_kv(data: PreflightInput, choices: DeployChoices) -> float:
    """The KV cache of one sequence of the context the operator (or the recipe) asked for, when
    the model's shape is known; an assumed cost would refuse hybrid models whose KV is small."""
    if choices.max_model_len is None or data.kv_shape is None:
        return 0.0
    return context_kv(choices.max_model_len, data.kv_shape, data.kv_element_bytes)


def _reachable(data: PreflightInput, choices: DeployChoices) -> Finding:
    missing = [h for h in choices.hosts if h not in data.hosts or h in data.unreachable]
    if not missing:
        answered = f"all {len(choices.hosts)} hosts answered"
        return _finding("reachable", "ok", "all_reachable", answered, choices.hosts)
    reasons = "; ".join(
        f"{h}: {data.unreachable.get(h, 'never probed (run recon first)')}" for h in missing
    )
    return _finding(
        "reachable",
        "blocker",
        "host_unreachable",
        f"{', '.join(missing)} did not answer ({reasons})",
        missing,
        fix="check that the host is powered on and reachable (through its jump host), then run "
        "recon again; every node of the deployment must answer",
    )


def _fabric(
    hosts: Mapping[str, HostFacts], choices: DeployChoices, links_tried: frozenset[str]
) -> tuple[Finding, dict[str, FabricPath] | None]:
    try:
        fabric = find_fabric(
            hosts, choices.hosts, interface=choices.fabric_interface, node_ips=choices.node_ips
        )
    except FabricError as exc:
        return _finding("fabric", "blocker", "no_fabric_path", str(exc), choices.hosts), None
    down = [p for p in fabric.values() if not p.link_up]
    if not down:
        return _fabric_up(fabric, choices), fabric
    path = next((p for p in down if _no_carrier(hosts[p.host], p)), down[0])
    netdevs = path.down_netdevs or (path.netdev,)
    unplugged = _no_carrier(hosts[path.host], path)
    if path.host in links_tried or unplugged:
        why = (
            f"is up but has no carrier (NO-CARRIER on {', '.join(unplugged)}): no cable or a "
            "bad one"
            if unplugged
            else "stays down after `ip link set … up`"
        )
        return (
            _finding(
                "fabric",
                "blocker",
                "roce_link_unfixable",
                f"{path.host}'s RoCE link ({path.netdev}) {why}",
                [path.host],
                fix=f"reseat the QSFP cable in the same cage on every node ({path.netdev}'s "
                "cage) and reboot if it is still Down; this needs a person at the machine",
                needs_person=True,
            ),
            fabric,
        )
    commands = " && ".join(f"sudo ip link set {n} up" for n in netdevs)
    return (
        _finding(
            "fabric",
            "blocker",
            "roce_link_down",
            f"the RoCE link of {path.host} is down ({path.netdev})",
            [p.host for p in down],
            fix=f"run `{commands}` on {path.host}; if it stays down, reseat the cable "
            "(needs a person)",
        ),
        fabric,
    )


def _fabric_up(fabric: dict[str, FabricPath], choices: DeployChoices) -> Finding:
    ips = ", ".join(f"{p.host} {p.netdev} {p.ip}" for p in fabric.values())
    if len(fabric) == 1:
        one = f"one node: no fabric between nodes needed (rendezvous on {ips})"
        return _finding("fabric", "ok", "single_node", one, choices.hosts)
    if any(p.netplan for p in fabric.values()):
        return _finding(
            "fabric",
            "warning",
            "fabric_unaddressed",
            "the cabled ConnectX ports are Up but have no address the nodes share (none, or "
            "link-local with more than one cable): the plan first writes NVIDIA's netplan with "
            f"one subnet per PCIe twin ({ips})",
            choices.hosts,
            fix=f"approve the netplan step ({NETPLAN_FILE}; its rollback restores the old file)",
        )
    if any(p.link_local for p in fabric.values()):
        up = (
            f"fabric Up on link-local addresses over one cable, as NVIDIA's guide allows: {ips} "
            "(they may change after a reboot; static per-twin subnets are the lasting fix)"
        )
        return _finding("fabric", "ok", "fabric_link_local", up, choices.hosts)
    if not any(p.routed for p in fabric.values()):
        up = f"fabric Up on a shared subnet: {ips}"
        return _finding("fabric", "ok", "fabric_up", up, choices.hosts)
    return _finding(
        "fabric",
        "warning",
        "fabric_routed",
        "every pair of nodes shares a fabric subnet of its own (a ring) but none spans them "
        f"all: engine sockets on the management network ({ips}), NCCL on every HCA with "
        "subnet-aware routing",
        choices.hosts,
        fix="NVIDIA's ring test builds NCCL from a ring branch (dgxspark-3node-ring): if the "
        "engine's log shows `NET/Socket` instead of `NET/IB`, use two nodes on one cable",
    )


def _mtu(hosts: Mapping[str, HostFacts], fabric: dict[str, FabricPath] | None) -> list[Finding]:
    """Both ends of the fabric at one MTU: frames larger than the smaller end's are dropped
    (failure mode #9, docs/sources.md §6; 9000 helped prefill slightly, §3.3)."""
    if not fabric or len(fabric) < 2 or any(p.routed for p in fabric.values()):
        return []
    mtus = {}
    for host, path in fabric.items():
        nic = next((n for n in hosts[host].network.interfaces if n.name == path.netdev), None)
        if nic is not None and nic.mtu:
            mtus[host] = (path.netdev, nic.mtu)
    if len({mtu for _, mtu in mtus.values()}) < 2:
        return []
    ends = ", ".join(f"{h} {netdev} {mtu}" for h, (netdev, mtu) in mtus.items())
    top = max(mtu for _, mtu in mtus.values())
    low = [h for h, (_, mtu) in mtus.items() if mtu < top]
    fix = "; ".join(
        f"on {h}: `sudo ip link set dev {mtus[h][0]} mtu {top}` (and in its netplan)" for h in low
    )
    return [
        _finding(
            "fabric",
            "warning",
            "fabric_mtu_mismatch",
            f"the fabric's ends disagree on MTU ({ends}): larger frames are dropped",
            low,
            fix=f"set both ends equal: {fix}",
        )
    ]


def _no_carrier(facts: HostFacts, path: FabricPath) -> list[str]:
    """Netdevs of the path that are administratively up yet see no link partner.

    `ip link set … up` cannot fix those (a person must seat the cable); an admin-down netdev
    has carrier None and can be brought up from here.
    """
    wanted = {path.netdev, *path.down_netdevs}
    return [n.name for n in facts.network.interfaces if n.name in wanted and n.carrier is False]


def _image_names(facts: HostFacts) -> set[str]:
    return {f"{i.repository}:{i.tag or 'latest'}" for i in facts.docker.images}


def _image(hosts: Mapping[str, HostFacts], choices: DeployChoices) -> Finding:
    image = choices.image or ""
    wanted = image if ":" in image.rsplit("/", 1)[-1] else f"{image}:latest"
    missing = [h for h, f in hosts.items() if wanted not in _image_names(f)]
    if not missing:
        present = f"{wanted} present on every node"
        return _finding("image", "ok", "image_present", present, list(hosts))
    return _finding(
        "image",
        "warning",
        "image_missing",
        f"image {wanted} is missing on {', '.join(missing)}",
        missing,
        fix="the plan pulls it there as jobs (or copies it from the head to a node without "
        "internet)",
    )


def _ports(hosts: Mapping[str, HostFacts], choices: DeployChoices) -> list[Finding]:
    wanted = {choices.port: "serving", choices.dist_port: "rendezvous"}
    if choices.recipe == "vllm-ray":
        wanted[choices.ray_port] = "ray"
    facts = hosts[choices.head]
    findings = []
    for port, role in wanted.items():
        if port not in facts.services.listening_ports:
            continue
        owner = next(
            (s.container or s.kind for s in facts.services.inference_servers if s.port == port),
            "another process",
        )
        findings.append(
            _finding(
                "ports",
                "blocker",
                "port_taken",
                f"port {port} ({role}) on {choices.head} is taken by {owner}",
                [choices.head],
                fix=f"stop {owner} first, or choose another port",
            )
        )
    return findings or [
        _finding(
            "ports",
            "ok",
            "ports_free",
            f"ports {sorted(p for p in wanted if p)} free on {choices.head}",
            [choices.head],
        )
    ]
