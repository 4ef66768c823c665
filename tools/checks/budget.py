"""What one node can give a model: its memory budget, who holds memory there, its GPUs.

The one place that turns a node's memory into the bytes a model may use (`usable_bytes`); the
layout chooser (tools/checks/layout.py) and the fit report (tools/deploy/plan/fit.py) only consume
it.

- GPU memory of its own: the free GPU memory times the engine's memory fraction (vLLM
  `--gpu-memory-utilization`, SGLang `--mem-fraction-static`).
- Unified memory (GB10): the engine takes `fraction × total` and refuses to start when CUDA
  cannot hand it out. What CUDA can allocate there stops short of MemAvailable: one Spark
  owner, headless with caches dropped, found it capped at about 102 of the 121.69 GiB vLLM
  reports, so a fraction of 0.87 never started and 0.82–0.83 was the most (MiaAI-Lab GLM issue
  #47, docs/sources.md §4); `cudaMemGetInfo` reports about MemFree, not MemAvailable
  (vLLM issue #48140, §1.2). The budget is therefore the smaller of MemAvailable and that cap.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tools.world.facts import HostFacts

DEFAULT_UTILIZATION = 0.8  # the engines' memory fraction when nobody chose one
# What CUDA could allocate of a GB10's total in the one report found: ~102 of 121.69 GiB.
CUDA_ALLOCATABLE_FRACTION = 102 / 121.69
# Below the most CUDA can give, so the engine's own start check passes (0.82–0.83 at 0.838).
UTILIZATION_MARGIN = 0.01


def running_with_memory(facts: HostFacts) -> list[tuple[str, int]]:
    """(name, bytes) of each running container that holds memory."""
    return [
        (c.name, c.memory_bytes)
        for c in facts.docker.containers
        if c.state == "running" and c.memory_bytes
    ]


@dataclass(frozen=True)
class NodeBudget:
    """Memory a model may use on one node, which containers hold memory there now, its GPUs."""

    host: str
    available_bytes: int
    total_bytes: int | None
    holders: tuple[tuple[str, int], ...] = ()
    gpus: int = 1
    unified: bool = False  # GB10: the engine's fraction is of the total, capped by what CUDA gives
    gpu_link: str | None = None  # how its GPUs reach each other ("NV18 between all 8 GPUs")
    pcie_only: bool = False  # several GPUs and no NVLink between them

    @classmethod
    def from_facts(cls, facts: HostFacts) -> NodeBudget | None:
        budget = facts.memory.budget_bytes
        if budget is None:
            return None
        holders = tuple(running_with_memory(facts))
        total = (
            facts.memory.total_bytes
            if facts.memory.unified_memory
            else facts.memory.gpu_total_bytes
        )
        gpus = max(len(facts.gpu.gpus), 1)
        unified = facts.memory.unified_memory and total is not None
        link, pcie = facts.gpu.interconnect_detail, facts.gpu.interconnect == "pcie"
        return cls(facts.host, budget, total, holders, gpus, unified, link, pcie)

    @property
    def freeable_bytes(self) -> int:
        """Available once the holders stop (never above the node's total)."""
        freed = self.available_bytes + sum(b for _, b in self.holders)
        return min(freed, self.total_bytes) if self.total_bytes else freed

    def usable(self, utilization: float) -> float:
        """Bytes a model may use here now."""
        return usable_bytes(self.available_bytes, utilization, self._unified_total)

    def usable_freed(self, utilization: float) -> float:
        """Bytes a model could use here once the containers holding memory are stopped."""
        return usable_bytes(self.freeable_bytes, utilization, self._unified_total)

    def allocatable(self, freed: bool = False) -> int:
        """What CUDA can hand out here (now, or once the holders stop)."""
        available = self.freeable_bytes if freed else self.available_bytes
        return cuda_allocatable(available, self._unified_total)

    def max_utilization(self, freed: bool = False) -> float | None:
        """The largest engine memory fraction that starts here (unified memory only)."""
        if self._unified_total is None:
            return None
        return self.allocatable(freed) / self._unified_total

    @property
    def _unified_total(self) -> int | None:
        return self.total_bytes if self.unified else None


def cuda_allocatable(available_bytes: int, unified_total: int | None) -> int:
    """What CUDA can allocate: on unified memory the smaller of MemAvailable and the cap."""
    if unified_total is None:
        return available_bytes
    return min(available_bytes, round(unified_total * CUDA_ALLOCATABLE_FRACTION))


def usable_bytes(budget_bytes: int, utilization: float, unified_total: int | None = None) -> float:
    """What an engine told to use `utilization` may take: of the free GPU memory, or on unified
    memory `utilization × total`, which it gets only when CUDA can allocate that much (else it
    gets nothing: the engine refuses to start, so only what CUDA gives counts)."""
    if unified_total is None:
        return budget_bytes * utilization
    return min(unified_total * utilization, cuda_allocatable(budget_bytes, unified_total))


def default_utilization(budgets: Sequence[NodeBudget], *, freed: bool = True) -> float:
    """The engine memory fraction for these nodes when nobody chose one: on unified memory the
    most every node's CUDA can give (less a margin, at most the usual 0.8), else 0.8."""
    ceilings = [u for b in budgets if (u := b.max_utilization(freed)) is not None]
    if not ceilings:
        return DEFAULT_UTILIZATION
    best = math.floor((min(ceilings) - UTILIZATION_MARGIN) * 100) / 100
    return max(min(DEFAULT_UTILIZATION, best), 0.1)


def budgets_for(hosts: Mapping[str, HostFacts], order: Sequence[str]) -> list[NodeBudget]:
    """The budgets of the hosts in `order` that reported one."""
    return [b for h in order if h in hosts and (b := NodeBudget.from_facts(hosts[h])) is not None]
