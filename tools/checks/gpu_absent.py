"""A host with no usable GPU, when a model is asked for: absence is a finding, not a silence.

Without GPUs a host offers no GPU memory, and a fit computed without it would simply leave the
host out, saying nothing; a person asking for a model there needs to hear why it cannot go
there (no driver, the driver not loaded, no device seen) and what would change that. The
reasons are read from what nvidia-smi said (tools/recon/parsers/gpu_absence.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from tools.recon.parsers.gpu_absence import no_gpu_reasons
from tools.world.facts import HostFacts
from tools.world.findings import Finding, gb

CHECK = "gpu"


def absent_gpu_findings(
    hosts: Mapping[str, HostFacts], model_size_bytes: int | None
) -> list[Finding]:
    """A blocker per host without a usable GPU, when a model is asked for."""
    if model_size_bytes is None:
        return []
    findings = []
    for name, facts in hosts.items():
        gpu = facts.gpu
        if gpu.gpus or gpu.unreachable:
            continue  # GPUs it lost or cannot reach are gpu_health's findings
        said = gpu.problem or ""
        reasons = no_gpu_reasons(said) or [said or "nvidia-smi listed no GPU"]
        findings.append(
            Finding(
                severity="blocker",
                check=CHECK,
                kind="no_usable_gpu",
                hosts=[name],
                message=f"no usable GPU on {name} ({'; '.join(reasons)}): a ~"
                f"{gb(model_size_bytes)} model cannot be placed there",
                fix="install or load the NVIDIA driver until `nvidia-smi` lists the GPUs, or "
                "leave the host out",
                needs_person=True,
                evidence=[
                    f"{s.host}: {s.command}: {said or 'no GPU listed'}" for s in gpu.sources[:1]
                ],
            )
        )
    return findings
