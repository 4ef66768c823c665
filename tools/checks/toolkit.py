"""The CUDA toolkit: whether builds that need nvcc will find it."""

from __future__ import annotations

from collections.abc import Mapping

from tools.world.facts import HostFacts
from tools.world.findings import Finding


def toolkit_findings(hosts: Mapping[str, HostFacts]) -> list[Finding]:
    off_path = [n for n, f in hosts.items() if f.toolkit.nvcc_on_path is False]
    if not off_path:
        return []
    present = [n for n in off_path if hosts[n].toolkit.cuda_nvcc_present]
    message = f"nvcc is not on PATH on {', '.join(off_path)}"
    if present:
        message += (
            f"; /usr/local/cuda/bin/nvcc exists on {', '.join(present)} "
            "(export PATH=/usr/local/cuda/bin:$PATH for builds that need it)"
        )
    return [
        Finding(
            severity="info", check="toolkit", kind="nvcc_off_path", hosts=off_path, message=message
        )
    ]
