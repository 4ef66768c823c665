"""Processes holding GPU memory on hosts whose GPUs have memory of their own (not unified).

What nvidia-smi lists under Processes holds GPU memory whether it runs in a container or not
(a real H200 host: `python3` pid 498 holding 41,570 MiB, tests/fixtures/recon/h200_*.txt). A
careful operator names it, how much it holds, and what stopping it would make possible for the
model asked about. It proposes stopping a process only when it is a serving engine
(engine_processes.py); any other holder is named with what it holds, and left to its owner.
On unified memory (GB10) the memory check reports the containers instead,
and nvidia-smi does not report per-process memory there.
"""

from __future__ import annotations

from collections.abc import Mapping

from tools.checks.budget import DEFAULT_UTILIZATION, usable_bytes
from tools.checks.engine_processes import is_engine
from tools.checks.fit_rule import Demand, NodeFit
from tools.world.facts import GpuProcessFact, HostFacts
from tools.world.findings import Finding, gb

CHECK = "memory"


def gpu_holder_findings(
    hosts: Mapping[str, HostFacts], model_size_bytes: int | None
) -> list[Finding]:
    """One finding per process holding GPU memory on a discrete-GPU host."""
    findings = []
    for name, facts in hosts.items():
        memory = facts.memory
        if memory.unified_memory or memory.gpu_free_bytes is None:
            continue
        for proc in facts.gpu.processes:
            if proc.memory_bytes:
                findings.append(_holder(name, facts, proc, model_size_bytes))
    return findings


def _holder(name: str, facts: HostFacts, proc: GpuProcessFact, size: int | None) -> Finding:
    held = proc.memory_bytes or 0
    free = facts.memory.gpu_free_bytes or 0
    total = facts.memory.gpu_total_bytes or free + held
    freed = min(free + held, total)
    message = f"{proc.name} (pid {proc.pid}) holds ~{gb(held)} of GPU memory on {name}"
    claims = []
    if size is None:
        message += f"; stopping it would make ~{gb(freed)} available (now ~{gb(free)})"
    else:
        verdict = _alone(name, size, free, freed, proc)
        claims.append(verdict.claim())
        model = f"a ~{gb(size)} model"
        if verdict.state == "fits":
            message += f"; {model} fits beside it"
        elif verdict.state == "fits_once_stopped":
            message += f"; stopping it would let {model} fit (~{gb(freed)} free then)"
        else:
            message += f"; even with it stopped {model} would not fit here (~{gb(freed)} free then)"
    return Finding(
        severity="warning",
        check=CHECK,
        kind="gpu_process_holds_memory",
        hosts=[name],
        message=message,
        fix=_fix(proc),
        evidence=[
            f"{s.host}: {s.command}: pid {proc.pid} {proc.name} {held // 1024**2} MiB"
            for s in facts.gpu.sources[:1]
        ],
        fit=claims,
    )


def _alone(host: str, size: int, free: int, freed: int, proc: GpuProcessFact) -> NodeFit:
    """The fit rule's verdict on the model alone on this host, now and with `proc` stopped."""
    return NodeFit(
        host=host,
        nodes=1,
        demand=Demand(size),
        utilization=DEFAULT_UTILIZATION,
        usable_now=usable_bytes(free, DEFAULT_UTILIZATION),
        usable_freed=usable_bytes(freed, DEFAULT_UTILIZATION),
        freeing=(f"pid {proc.pid}",),
    )


def _fix(proc: GpuProcessFact) -> str:
    if is_engine(proc.name):
        return f"if nothing needs it, stop it (`kill {proc.pid}`, or stop its container)"
    return (
        f"{proc.name} is not a serving engine Scout knows, so Scout will not stop it: ask "
        f"whoever runs pid {proc.pid} to free the GPU, or choose another host"
    )
