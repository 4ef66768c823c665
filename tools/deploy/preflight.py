"""Preflight: every condition a multi-node launch needs, checked on the world model's facts.

Each check is ok / warning / blocker with a message and what to do. Facts older than the
caller's limit are probed again first through a callback, so a decision never rests on an old
reading. Checks only compute; nothing here changes a host.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from tools.deploy.choices import DeployChoices
from tools.deploy.fabric import FabricError, FabricPath, find_fabric
from tools.deploy.fit import DEFAULT_HF_CACHE, FitVerdict, budgets_for, check_fit, gb
from tools.recon.facts import HostFacts

Status = Literal["ok", "warning", "blocker"]
Reprobe = Callable[[list[str]], Awaitable[dict[str, HostFacts]]]
STATUS_ORDER = {"blocker": 0, "warning": 1, "ok": 2}
DISK_MARGIN = 1.1


@dataclass
class Check:
    name: str
    status: Status
    message: str
    hosts: list[str] = field(default_factory=list)
    fix: str | None = None
    needs_person: bool = False

    def line(self) -> str:
        text = f"[{self.status}] {self.name}: {self.message}"
        return text + (f" → {self.fix}" if self.fix else "")


@dataclass
class PreflightReport:
    checks: list[Check]
    fabric: dict[str, FabricPath] | None
    fit: FitVerdict | None

    @property
    def blockers(self) -> list[Check]:
        return [c for c in self.checks if c.status == "blocker"]

    @property
    def ok(self) -> bool:
        return not self.blockers

    def render(self) -> str:
        return "\n".join(
            c.line() for c in sorted(self.checks, key=lambda c: STATUS_ORDER[c.status])
        )


@dataclass
class PreflightInput:
    """What preflight reads: facts per host, hosts that did not answer, the model's size."""

    hosts: Mapping[str, HostFacts]
    unreachable: Mapping[str, str] = field(default_factory=dict)
    model_size_bytes: int | None = None
    cached_bytes: Mapping[str, int | None] = field(default_factory=dict)
    links_tried: frozenset[str] = frozenset()


async def refresh_stale(
    hosts: dict[str, HostFacts], stale: list[str], reprobe: Reprobe | None
) -> dict[str, HostFacts]:
    """Facts with the stale hosts probed again (hosts that fail keep their old facts)."""
    if not stale or reprobe is None:
        return hosts
    return {**hosts, **await reprobe(stale)}


def run_preflight(data: PreflightInput, choices: DeployChoices) -> PreflightReport:
    """All checks for `choices` (resolved), blockers first."""
    choices = choices.resolved()
    checks = [_reachable(data, choices)]
    present = [h for h in choices.hosts if h in data.hosts and h not in data.unreachable]
    if len(present) < len(choices.hosts):
        return PreflightReport(checks, None, None)
    hosts = {h: data.hosts[h] for h in choices.hosts}
    fabric_check, fabric = _fabric(hosts, choices, data.links_tried)
    checks += [_rdma(hosts, choices), fabric_check, *_docker(hosts), _image(hosts, choices)]
    checks += _ports(hosts, choices)
    fit = None
    if data.model_size_bytes:
        fit = check_fit(
            data.model_size_bytes, budgets_for(hosts, choices.hosts), choices.gpu_memory_utilization
        )
        checks.append(_memory(fit))
        checks += _weights(hosts, choices, data)
    checks += _skew(hosts)
    checks.sort(key=lambda c: STATUS_ORDER[c.status])
    return PreflightReport(checks, fabric, fit)


def _reachable(data: PreflightInput, choices: DeployChoices) -> Check:
    missing = [h for h in choices.hosts if h not in data.hosts or h in data.unreachable]
    if not missing:
        return Check("reachable", "ok", f"all {len(choices.hosts)} hosts answered", choices.hosts)
    reasons = "; ".join(
        f"{h}: {data.unreachable.get(h, 'never probed (run recon first)')}" for h in missing
    )
    return Check(
        "reachable",
        "blocker",
        f"{', '.join(missing)} did not answer ({reasons})",
        missing,
        fix="check that the host is powered on and reachable (through its jump host), then run "
        "recon again; every node of the deployment must answer",
    )


def _fabric(
    hosts: Mapping[str, HostFacts], choices: DeployChoices, links_tried: frozenset[str]
) -> tuple[Check, dict[str, FabricPath] | None]:
    try:
        fabric = find_fabric(
            hosts, choices.hosts, interface=choices.fabric_interface, node_ips=choices.node_ips
        )
    except FabricError as exc:
        return Check("fabric", "blocker", str(exc), choices.hosts), None
    down = [p for p in fabric.values() if not p.link_up]
    if not down:
        ips = ", ".join(f"{p.host} {p.netdev} {p.ip}" for p in fabric.values())
        return Check("fabric", "ok", f"fabric Up on a shared subnet: {ips}", choices.hosts), fabric
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
            Check(
                "fabric",
                "blocker",
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
        Check(
            "fabric",
            "blocker",
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


def _rdma(hosts: Mapping[str, HostFacts], choices: DeployChoices) -> Check:
    bare = [h for h, f in hosts.items() if not f.rdma.ports and f.rdma.problem is None]
    if len(hosts) > 1 and bare:
        return Check(
            "rdma",
            "blocker",
            f"no RDMA devices on {', '.join(bare)} (no ConnectX port at all)",
            bare,
            fix="plug a QSFP cable into the same cage on every node (the ConnectX-7 may only "
            "enumerate with a cable) and reboot; this needs a person at the machine",
            needs_person=True,
        )
    return Check("rdma", "ok", "RDMA devices present on every node", list(hosts))


def _docker(hosts: Mapping[str, HostFacts]) -> list[Check]:
    checks = []
    for host, facts in hosts.items():
        d = facts.docker
        if d.installed is False:
            checks.append(
                Check(
                    "docker",
                    "blocker",
                    f"docker is not installed on {host}",
                    [host],
                    fix="install Docker CE and the NVIDIA container toolkit",
                )
            )
        elif d.permission_denied:
            checks.append(
                Check(
                    "docker",
                    "blocker",
                    f"docker on {host} refuses the user",
                    [host],
                    fix="`sudo usermod -aG docker $USER`, then log in again",
                )
            )
        elif d.usable is False:
            checks.append(
                Check(
                    "docker",
                    "blocker",
                    f"docker on {host} cannot reach its daemon",
                    [host],
                    fix="`sudo systemctl start docker`",
                )
            )
    return checks or [Check("docker", "ok", "docker usable on every node", list(hosts))]


def _image_names(facts: HostFacts) -> set[str]:
    return {f"{i.repository}:{i.tag or 'latest'}" for i in facts.docker.images}


def _image(hosts: Mapping[str, HostFacts], choices: DeployChoices) -> Check:
    image = choices.image or ""
    wanted = image if ":" in image.rsplit("/", 1)[-1] else f"{image}:latest"
    missing = [h for h, f in hosts.items() if wanted not in _image_names(f)]
    if not missing:
        return Check("image", "ok", f"{wanted} present on every node", list(hosts))
    have = [h for h in hosts if h not in missing]
    copy = (
        f" or copy it from {have[0]}: `docker save {wanted} | ssh {missing[0]} docker load`"
        if have
        else ""
    )
    return Check(
        "image",
        "blocker",
        f"image {wanted} is missing on {', '.join(missing)}",
        missing,
        fix=f"`docker pull {wanted}` there{copy}",
    )


def _ports(hosts: Mapping[str, HostFacts], choices: DeployChoices) -> list[Check]:
    wanted = {choices.port: "serving", choices.dist_port: "rendezvous"}
    if choices.recipe == "vllm-ray":
        wanted[choices.ray_port] = "ray"
    facts = hosts[choices.head]
    checks = []
    for port, role in wanted.items():
        if port not in facts.services.listening_ports:
            continue
        owner = next(
            (s.container or s.kind for s in facts.services.inference_servers if s.port == port),
            "another process",
        )
        checks.append(
            Check(
                "ports",
                "blocker",
                f"port {port} ({role}) on {choices.head} is taken by {owner}",
                [choices.head],
                fix=f"stop {owner} first, or choose another port",
            )
        )
    return checks or [
        Check(
            "ports",
            "ok",
            f"ports {sorted(p for p in wanted if p)} free on {choices.head}",
            [choices.head],
        )
    ]


def _memory(fit: FitVerdict) -> Check:
    if fit.fits:
        return Check("memory", "ok", fit.message)
    holders = sorted({c for names in fit.blocking_containers.values() for c in names})
    fix = (
        f"stop {', '.join(holders)}" if holders else "use more nodes or a smaller (quantised) model"
    )
    return Check("memory", "blocker", fit.message, sorted(fit.blocking_containers), fix=fix)


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
) -> list[Check]:
    size = data.model_size_bytes or 0
    checks = []
    for host, facts in hosts.items():
        state, cached = _cache_state(host, facts, choices, data)
        if state == "cached" and cached is not None and cached >= size * 0.98:
            checks.append(
                Check("weights", "ok", f"{choices.model} cached on {host} ({gb(cached)})", [host])
            )
            continue
        if state == "cached" and cached is None:
            checks.append(
                Check(
                    "weights",
                    "warning",
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
            checks.append(
                Check(
                    "weights",
                    "blocker",
                    f"{choices.model} is {where} on {host} and "
                    f"only {gb(free)} is free (needs {gb(needed)})",
                    [host],
                    fix="free disk space or point hf_cache at a larger disk",
                )
            )
        else:
            checks.append(
                Check(
                    "weights",
                    "warning",
                    f"{choices.model} is {where} on {host}; the engine runs with HF_HUB_OFFLINE=1",
                    [host],
                    fix=f"download it first on {host}: `hf download {choices.model}`",
                )
            )
    return checks


def _skew(hosts: Mapping[str, HostFacts]) -> list[Check]:
    fields = {
        "OS": lambda f: f.os.pretty_name,
        "driver": lambda f: f.gpu.driver_version,
        "CUDA": lambda f: f.gpu.cuda_version,
        "DGX OTA": lambda f: f.os.dgx_ota_version,
    }
    checks = []
    for label, read in fields.items():
        values = {h: read(f) for h, f in hosts.items()}
        if len({v for v in values.values() if v}) > 1:
            listed = ", ".join(f"{h} {v or 'unknown'}" for h, v in values.items())
            checks.append(
                Check(
                    "versions",
                    "warning",
                    f"{label} differs: {listed}",
                    list(hosts),
                    fix="align them (same DGX OS / OTA) before clustering",
                )
            )
    return checks or [
        Check("versions", "ok", "OS, driver and CUDA alike on every node", list(hosts))
    ]
