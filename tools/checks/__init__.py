"""Checks: what probed facts mean across hosts, computed by code, each finding with its evidence.

The world model computes findings from these after every probe; the deployment preflight reads
the same facts. Import from here (`from tools.checks import Finding, compute_findings`).
"""

from tools.checks.findings import GB, Finding, Severity, compute_findings, gb

__all__ = ["GB", "Finding", "Severity", "compute_findings", "gb"]
