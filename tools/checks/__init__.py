"""Checks: what probed facts mean across hosts, computed by code, each finding with its evidence.

One registry (`registry.CHECKS`) serves the world model, which lists every finding after each
probe, and a deployment's preflight, which runs the checks it needs on the chosen hosts. One
module per concept: memory, fabric, versions, toolkit, docker; they return findings
(tools/world/findings.py).
What a node can give a model (`budget`) and which nodes a model needs, split how (`layout`),
serve the memory check and a deployment's plan alike.
"""

from tools.checks.registry import CHECKS, Check, compute_findings, preflight_findings
from tools.world.findings import GB, Finding, Severity, by_severity, gb

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
