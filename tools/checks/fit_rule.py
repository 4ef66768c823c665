"""The one fit rule: does a node hold its share of a model. Every message that says a model fits
or does not (the layout's reason, preflight's memory line, recon's memory findings, a GPU
holder's "stopping it would let …", a smaller quantisation offered instead) quotes a verdict
from here, so no two messages of a session can disagree.

What a node must hold (`Demand.per_node`):
- its share of the weights: tensor parallelism splits every layer, pipeline parallelism the
  layers, either way about 1/nodes of the bytes;
- headroom beyond the weights for activations (the engine's profiled peak), CUDA graphs and the
  KV cache. With no context asked it is 10% of the weights, the rule the layout chooser has
  always applied; the length is then sized to what is left (tools/deploy/launch/engine_settings.py).
  With a context asked (`--max-model-len` set by the operator or the recipe) and the model's
  KV shape known (config.json, or the shape a recipe records; never an assumed cost), vLLM
  refuses to start unless one sequence of that length fits its KV cache ("To serve at least one
  request with the models's max seq len … in KV cache", vllm/v1/core/kv_cache_utils.py
  `check_enough_kv_cache_memory`), so the headroom is at least that sequence's KV plus a
  reserve for activations and graphs.

What a node can give is budget.py's `usable` at the engine's memory fraction, now and once the
containers holding memory there stop; the fraction (the ceiling per node count, or the recipe's
own) reaches every verdict as `utilization`.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.checks.budget import NodeBudget
from tools.world.findings import GB, FitClaim, FitState

KV_HEADROOM_FRACTION = 0.10  # of a node's weights, kept free for KV cache and activations
# Activations at vLLM's default batch of 8192 tokens plus captured CUDA graphs, beside the KV of
# an asked context [U: an estimate; vLLM logs each at start, "took X GiB"]
RUNTIME_RESERVE_BYTES = 3 * GB


@dataclass(frozen=True)
class NodeNeed:
    """What one node must hold: its share of the weights and the headroom beside them."""

    weights: float
    headroom: float

    @property
    def total(self) -> float:
        return self.weights + self.headroom


@dataclass(frozen=True)
class Demand:
    """A model to place: its weights' bytes and, when a context length is asked, the KV cache
    of one sequence of it over the whole model (0: none asked)."""

    size_bytes: int
    context_kv_bytes: float = 0.0

    def per_node(self, nodes: int) -> NodeNeed:
        weights = self.size_bytes / max(nodes, 1)
        headroom = weights * KV_HEADROOM_FRACTION
        if self.context_kv_bytes:
            kv = self.context_kv_bytes / max(nodes, 1) + RUNTIME_RESERVE_BYTES
            headroom = max(headroom, kv)
        return NodeNeed(weights, headroom)


@dataclass(frozen=True)
class NodeFit:
    """The verdict for one node as one of `nodes`: what it needs, what it gives now and once
    `freeing` (the containers or processes holding memory there) stop."""

    host: str
    nodes: int
    demand: Demand
    utilization: float
    usable_now: float
    usable_freed: float
    freeing: tuple[str, ...] = ()

    @property
    def need(self) -> NodeNeed:
        return self.demand.per_node(self.nodes)

    @property
    def state(self) -> FitState:
        if self.need.total <= self.usable_now:
            return "fits"
        if self.freeing and self.need.total <= self.usable_freed:
            return "fits_once_stopped"
        return "short"

    @property
    def holds_once_freed(self) -> bool:
        """It fits now or once what holds memory there stops."""
        return self.state != "short"

    def claim(self) -> FitClaim:
        """The verdict as data, kept beside each message that quotes it."""
        return FitClaim(
            host=self.host,
            nodes=self.nodes,
            size_bytes=self.demand.size_bytes,
            utilization=self.utilization,
            state=self.state,
            freeing=list(self.freeing),
            context_kv_bytes=self.demand.context_kv_bytes,
        )


def fit_on(node: NodeBudget, demand: Demand, nodes: int, utilization: float) -> NodeFit:
    """The verdict for `node` holding its share of `demand` as one of `nodes` nodes."""
    return NodeFit(
        host=node.host,
        nodes=nodes,
        demand=demand,
        utilization=utilization,
        usable_now=node.usable(utilization),
        usable_freed=node.usable_freed(utilization),
        freeing=tuple(name for name, _ in node.holders),
    )
