"""What one node can give a model: its memory budget, who holds memory there, its GPUs.

The one place that turns a node's memory into the bytes a model may use (`usable_bytes`); the
layout chooser (tools/checks/layout.py) and the fit report (tools/deploy/fit.py) only consume it.
Today it is the budget times the engine's memory fraction (vLLM `--gpu-memory-utilization`,
SGLang `--mem-fraction-static`); on unified memory that budget is /proc/meminfo's MemAvailable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tools.recon.facts import HostFacts

DEFAULT_UTILIZATION = 0.8  # the engines' memory fraction when nobody chose one


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
        return cls(facts.host, budget, total, holders, max(len(facts.gpu.gpus), 1))

    @property
    def freeable_bytes(self) -> int:
        """Available once the holders stop (never above the node's total)."""
        freed = self.available_bytes + sum(b for _, b in self.holders)
        return min(freed, self.total_bytes) if self.total_bytes else freed

    def usable(self, utilization: float) -> float:
        """Bytes a model may use here now."""
        return usable_bytes(self.available_bytes, utilization)

    def usable_freed(self, utilization: float) -> float:
        """Bytes a model could use here once the containers holding memory are stopped."""
        return usable_bytes(self.freeable_bytes, utilization)


def usable_bytes(budget_bytes: int, utilization: float) -> float:
    """What an engine told to use `utilization` of the memory may take of `budget_bytes`."""
    return budget_bytes * utilization


def budgets_for(hosts: Mapping[str, HostFacts], order: Sequence[str]) -> list[NodeBudget]:
    """The budgets of the hosts in `order` that reported one."""
    return [b for h in order if h in hosts and (b := NodeBudget.from_facts(hosts[h])) is not None]
