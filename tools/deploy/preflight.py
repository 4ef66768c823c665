"""Preflight: every condition a multi-node launch needs, checked on the world model's facts.

Each finding is ok / warning / blocker with a message and what to do. The fact checks come from
the shared registry (tools/checks: RDMA devices, docker, versions); the checks here need the
chosen deployment (reachable nodes, its fabric path, image, ports, fit, weights). The caller
re-probes stale hosts first. Checks only compute; nothing here changes a host.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from tools.checks import Finding, Severity, by_severity, preflight_findings
from tools.deploy.choices import DeployChoices
from tools.deploy.fabric import FabricError, FabricPath, find_fabric
from tools.deploy.fit import DEFAULT_HF_CACHE, FitVerdict, budgets_for, check_fit, gb
from tools.recon.facts import HostFacts

DISK_MARGIN = 1.1


def _finding(
    check: str,
    severity: Severity,
    kind: str,
    message: str,
    hosts: list[str],
    fix: str | None = None,
    *,
    needs_person: bool = False,
) -> Finding:
    return Finding(
        severity=severity,
        check=check,
        kind=kind,
        hosts=hosts,
        message=message,
        fix=fix,
        needs_person=needs_person,
    )


@dataclass
class PreflightReport:
    findings: list[Finding]
    fabric: dict[str, FabricPath] | None
    fit: FitVerdict | None

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
    """What preflight reads: facts per host, hosts that did not answer, the model's size."""

    hosts: Mapping[str, HostFacts]
    unreachable: Mapping[str, str] = field(default_factory=dict)
    model_size_bytes: int | None = None
    cached_bytes: Mapping[str, int | None] = field(default_factory=dict)
    links_tried: frozenset[str] = frozenset()


def run_preflight(data: PreflightInput, choices: DeployChoices) -> PreflightReport:
    """All checks for `choices` (resolved), blockers first."""
    choices = choices.resolved()
    findings = [_reachable(data, choices)]
    present = [h for h in choices.hosts if h in data.hosts and h not in data.unreachable]
    if len(present) < len(choices.hosts):
        return PreflightReport(findings, None, None)
    hosts = {h: data.hosts[h] for h in choices.hosts}
    shared = preflight_findings(hosts)
    fabric_finding, fabric = _fabric(hosts, choices, data.links_tried)
    findings += [*shared["rdma"], fabric_finding, *shared["docker"], _image(hosts, choices)]
    findings += _ports(hosts, choices)
    fit = None
    if data.model_size_bytes:
        fit = check_fit(
            data.model_size_bytes, budgets_for(hosts, choices.hosts), choices.gpu_memory_utilization
        )
        findings.append(_memory(fit))
        findings += _weights(hosts, choices, data)
    findings += shared["versions"]
    return PreflightReport(by_severity(findings), fabric, fit)


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
        ips = ", ".join(f"{p.host} {p.netdev} {p.ip}" for p in fabric.values())
        up = f"fabric Up on a shared subnet: {ips}"
        return _finding("fabric", "ok", "fabric_up", up, choices.hosts), fabric
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
    have = [h for h in hosts if h not in missing]
    copy = (
        f" or copy it from {have[0]}: `docker save {wanted} | ssh {missing[0]} docker load`"
        if have
        else ""
    )
    return _finding(
        "image",
        "blocker",
        "image_missing",
        f"image {wanted} is missing on {', '.join(missing)}",
        missing,
        fix=f"`docker pull {wanted}` there{copy}",
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


def _memory(fit: FitVerdict) -> Finding:
    if fit.fits:
        return _finding("memory", "ok", "model_fits", fit.message, [])
    holders = sorted({c for names in fit.blocking_containers.values() for c in names})
    fix = (
        f"stop {', '.join(holders)}" if holders else "use more nodes or a smaller (quantised) model"
    )
    blocked = sorted(fit.blocking_containers)
    return _finding("memory", "blocker", "model_does_not_fit", fit.message, blocked, fix)


CacheState = Literal["cached", "absent", "unknown"]


def _cache_state(
    host: str, facts: HostFacts, choices: DeployChoices, data: PreflightInput
) -> tuple[CacheState, int | None]:
    """Whether the model is in the host's HF cache, and its bytes there (None: not measured).

    A measurement passed in (`du` on a custom hf_cache) wins; else recon's listing of the
    default cache answers.
    """
    if host in data.cached_bytes:
        measured = data.cached_bytes[host]
        return ("absent", None) if measured is None else ("cached", measured)
    listing = facts.hf_cache.models
    if listing is None or choices.hf_cache != DEFAULT_HF_CACHE:
        return "unknown", None
    if choices.model not in listing:
        return "absent", None
    return "cached", listing[choices.model]


def _weights(
    hosts: Mapping[str, HostFacts], choices: DeployChoices, data: PreflightInput
) -> list[Finding]:
    size = data.model_size_bytes or 0
    findings = []
    for host, facts in hosts.items():
        state, cached = _cache_state(host, facts, choices, data)
        if state == "cached" and cached is not None and cached >= size * 0.98:
            findings.append(
                _finding(
                    "weights",
                    "ok",
                    "weights_cached",
                    f"{choices.model} cached on {host} ({gb(cached)})",
                    [host],
                )
            )
            continue
        if state == "cached" and cached is None:
            findings.append(
                _finding(
                    "weights",
                    "warning",
                    "weights_size_unknown",
                    f"{choices.model} is in the HF cache on {host} but its size is unknown "
                    "(no `du` there)",
                    [host],
                    fix=f"check the download is complete on {host}: `hf download {choices.model}` "
                    "finishes at once when it is",
                )
            )
            continue
        free = max((d.available_bytes for d in facts.disk.disks), default=None)
        where = {
            "cached": f"only partly cached ({gb(cached or 0)} of {gb(size)})",
            "absent": "not cached",
            "unknown": "not known to be cached",
        }[state]
        needed = (size - (cached or 0)) * DISK_MARGIN
        if free is not None and free < needed:
            findings.append(
                _finding(
                    "weights",
                    "blocker",
                    "disk_too_small",
                    f"{choices.model} is {where} on {host} and "
                    f"only {gb(free)} is free (needs {gb(needed)})",
                    [host],
                    fix="free disk space or point hf_cache at a larger disk",
                )
            )
        else:
            findings.append(
                _finding(
                    "weights",
                    "warning",
                    "weights_not_cached",
                    f"{choices.model} is {where} on {host}; the engine runs with HF_HUB_OFFLINE=1",
                    [host],
                    fix=f"download it first on {host}: `hf download {choices.model}`",
                )
            )
    return findings
