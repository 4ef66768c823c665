"""Versions that must match across the nodes of one deployment: driver, CUDA, OS, OTA, kernel."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tools.world.facts import HostFacts
from tools.world.findings import Finding

_VERSIONS: dict[str, Callable[[HostFacts], str | None]] = {
    "driver": lambda f: f.gpu.driver_version,
    "CUDA": lambda f: f.gpu.cuda_version,
    "OS": lambda f: f.os.pretty_name,
    "DGX OTA": lambda f: f.os.dgx_ota_version,
    "kernel": lambda f: f.identity.kernel,
}


def skew_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    """One warning per version that differs between the hosts (unknown values do not count)."""
    findings = []
    for label, read in _VERSIONS.items():
        values = {name: read(facts) for name, facts in hosts.items()}
        if len({v for v in values.values() if v}) > 1:
            findings.append(
                Finding(
                    severity="warning",
                    check="versions",
                    kind="version_skew",
                    hosts=list(values),
                    message=f"{label} differs between hosts: "
                    + ", ".join(f"{name} {value or 'unknown'}" for name, value in values.items()),
                    fix="align them before clustering",
                )
            )
    return findings
