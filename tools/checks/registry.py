"""The one registry of checks over probed facts, shared by the world model and preflight.

The world model runs every check after each probe (`compute_findings`). A deployment's preflight
runs the checks marked `in_preflight` on the chosen hosts (`preflight_findings`), reporting each
one that found nothing as an `ok` line, next to the checks that need the chosen recipe.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tools.checks.cluster_leftovers import leftover_findings
from tools.checks.docker import docker_findings
from tools.checks.fabric import fabric_findings, rdma_findings
from tools.checks.fabric_mtu import mtu_findings
from tools.checks.gpu_absent import absent_gpu_findings
from tools.checks.gpu_health import gpu_health_findings
from tools.checks.gpu_holders import gpu_holder_findings
from tools.checks.memory import memory_findings
from tools.checks.toolkit import toolkit_findings
from tools.checks.versions import skew_findings
from tools.checks.wall import wall_findings
from tools.world.facts import HostFacts
from tools.world.findings import Finding, by_severity

Hosts = Mapping[str, HostFacts]
Find = Callable[
    [Hosts, int | None], list[Finding]
]  # (facts per host, the model's size) -> findings


@dataclass(frozen=True)
class Check:
    """A named check: what it finds on the hosts, and (if preflight runs it) its all-clear line."""

    name: str
    find: Find
    all_clear: str | None = None  # set: preflight runs it and reports this when nothing is found


def _facts_only(find: Callable[[Hosts], list[Finding]]) -> Find:
    """A check that reads only the facts, not the model's size."""
    return lambda hosts, _model_size_bytes: find(hosts)


CHECKS: tuple[Check, ...] = (
    Check("memory", memory_findings),
    Check("gpu_holders", gpu_holder_findings),
    Check("gpu", _facts_only(gpu_health_findings), "every GPU reachable, none lost, MIG off"),
    Check("gpu_absent", absent_gpu_findings),
    Check("rdma", _facts_only(rdma_findings), "RDMA devices present on every node"),
    Check("fabric", _facts_only(fabric_findings)),
    Check("mtu", _facts_only(mtu_findings)),
    Check("versions", _facts_only(skew_findings), "OS, driver and CUDA alike on every node"),
    Check("toolkit", _facts_only(toolkit_findings)),
    Check("docker", _facts_only(docker_findings), "docker usable on every node"),
    Check("leftovers", _facts_only(leftover_findings), "no stale Ray, one image, no earlyoom"),
    Check("wall", _facts_only(wall_findings)),
)


def compute_findings(hosts: Hosts, model_size_bytes: int | None = None) -> list[Finding]:
    """Every finding for the hosts given, blockers first."""
    return by_severity(f for check in CHECKS for f in check.find(hosts, model_size_bytes))


def preflight_findings(hosts: Hosts) -> dict[str, list[Finding]]:
    """For each check preflight runs: what it found on `hosts`, or its `ok` line."""
    results = {}
    for check in CHECKS:
        if check.all_clear is None:
            continue
        found = check.find(hosts, None) or [
            Finding(
                severity="ok",
                check=check.name,
                kind="all_clear",
                hosts=list(hosts),
                message=check.all_clear,
            )
        ]
        results[check.name] = found
    return results
