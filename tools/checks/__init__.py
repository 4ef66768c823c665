"""Checks: what probed facts mean across hosts, computed by code, each finding with its evidence.

One registry (`registry.CHECKS`) serves the world model, which lists every finding after each
probe, and a deployment's preflight, which runs the checks it needs on the chosen hosts. One
module per concept: memory, fabric, versions, toolkit, docker; `finding` is what they return.
"""

from tools.checks.finding import GB, Finding, Severity, by_severity, gb
from tools.checks.registry import CHECKS, Check, compute_findings, preflight_findings

__all__ = [
    "CHECKS",
    "GB",
    "Check",
    "Finding",
    "Severity",
    "by_severity",
    "compute_findings",
    "gb",
    "preflight_findings",
]
