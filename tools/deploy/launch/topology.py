"""The layout and engine sizes an operator's recipe asks for, which win over Scout's choosers.

A recipe states its topology: `defaults.tensor_parallel` and `pipeline_parallel` (the parallel
sizes its command is filled with), `cluster_only` (two nodes at least) and `solo_only` (one
node). Its runner runs it that way (spark-vllm-docker's `run-recipe.py`: the sizes from
`defaults`, and in solo mode `tensor_parallel` 1 unless the operator passes `--tp`), so a plan
made from the operator's recipe does too, unless the operator set the sizes or the node count;
the plan then says where Scout's chooser would have differed. The memory fraction, a numeric
context and the port its command passes are passed too, unless the operator set them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tools.checks.layout import Layout
from tools.deploy.choices import DeployChoices
from tools.deploy.recipe_book.schema import Recipe
from tools.world.facts import HostFacts


class TopologyRefusal(ValueError):
    """The hosts given cannot run the recipe's topology; the message says why."""


@dataclass(frozen=True)
class Topology:
    """The sizes the recipe asks for here, and why."""

    tensor_parallel: int
    pipeline_parallel: int
    nodes: int
    why: str

    def matches(self, layout: Layout) -> bool:
        """Whether Scout's chooser picked the same split on as many nodes."""
        return (layout.tensor_parallel, layout.pipeline_parallel, len(layout.hosts)) == (
            self.tensor_parallel,
            self.pipeline_parallel,
            self.nodes,
        )

    @property
    def label(self) -> str:
        tp = f"TP={self.tensor_parallel}"
        split = tp if self.pipeline_parallel == 1 else f"{tp} × PP={self.pipeline_parallel}"
        return f"{split} on {self.nodes} node{'s' if self.nodes > 1 else ''}"


def asked_topology(
    recipe: Recipe | None, choices: DeployChoices, hosts: Mapping[str, HostFacts]
) -> Topology | None:
    """The recipe's topology for these hosts, or None when it states none or the operator chose
    the layout; TopologyRefusal when the hosts cannot hold it."""
    if recipe is None or choices.tensor_parallel or choices.pipeline_parallel or choices.nodes:
        return None
    where = f"recipe {recipe.name}"
    if recipe.max_nodes == 1 or (len(choices.hosts) == 1 and recipe.min_nodes == 1):
        why = "solo_only" if recipe.max_nodes == 1 else "one host given"
        return Topology(1, 1, 1, f"{where}: {why}, run solo (its runner's tensor_parallel 1)")
    tp = _size(recipe, "tensor_parallel")
    pp = _size(recipe, "pipeline_parallel")
    if tp is None and pp is None:
        return None
    tp, pp = tp or 1, pp or 1
    gpus = _gpus_per_node(hosts, choices.hosts)
    if (tp * pp) % gpus:
        raise TopologyRefusal(
            f"{where} asks TP={tp} × PP={pp} = {tp * pp} GPUs, not a whole number of "
            f"{gpus}-GPU nodes; set tensor_parallel and pipeline_parallel yourself"
        )
    nodes = max(tp * pp // gpus, recipe.min_nodes)
    if nodes > len(choices.hosts):
        raise TopologyRefusal(
            f"{where} asks TP={tp} × PP={pp} = {tp * pp} GPUs on {nodes} node(s); "
            f"{len(choices.hosts)} host(s) given: give more hosts, or set tensor_parallel and "
            "pipeline_parallel yourself"
        )
    said = [
        d.source for d in (recipe.defaults.tensor_parallel, recipe.defaults.pipeline_parallel) if d
    ]
    return Topology(tp, pp, nodes, f"{where}: {'; '.join(said)}")


def apply_topology(choices: DeployChoices, topology: Topology) -> DeployChoices:
    return choices.model_copy(
        update={
            "tensor_parallel": topology.tensor_parallel,
            "pipeline_parallel": topology.pipeline_parallel,
            "nodes": topology.nodes,
        }
    )


def asked_settings(recipe: Recipe | None, choices: DeployChoices) -> dict[str, float | int]:
    """The recipe's memory fraction and context, where the operator set neither (`auto`
    context is left to Scout's sizing, as vLLM's auto sizes it)."""
    if recipe is None:
        return {}
    asked: dict[str, float | int] = {}
    util, length = recipe.defaults.gpu_memory_utilization, recipe.defaults.max_model_len
    if choices.gpu_memory_utilization is None and util is not None:
        fraction = _number(recipe, "gpu_memory_utilization", util.value)
        if not 0.05 < fraction <= 0.95:
            raise TopologyRefusal(
                f"recipe {recipe.name} passes --gpu-memory-utilization {fraction:g}; Scout plans "
                "a fraction above 0.05 and at most 0.95: set gpu_memory_utilization yourself"
            )
        asked["gpu_memory_utilization"] = fraction
    if choices.max_model_len is None and length is not None and str(length.value) != "auto":
        asked["max_model_len"] = int(_number(recipe, "max_model_len", length.value))
    if choices.port is None and "port" in recipe.params:
        asked["port"] = int(_number(recipe, "port", recipe.params["port"]))
    return asked


def _number(recipe: Recipe, key: str, value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise TopologyRefusal(
            f"recipe {recipe.name}: defaults.{key} `{value}` is not a number"
        ) from None


def _size(recipe: Recipe, key: str) -> int | None:
    value = getattr(recipe.defaults, key)
    if value is None:
        return None
    try:
        size = int(value.value)
    except (TypeError, ValueError):
        raise TopologyRefusal(
            f"recipe {recipe.name}: defaults.{key} `{value.value}` is not a size"
        ) from None
    return size if size >= 1 else None


def _gpus_per_node(hosts: Mapping[str, HostFacts], order: list[str]) -> int:
    for host in order:
        if host in hosts and hosts[host].gpu.gpus:
            return len(hosts[host].gpu.gpus)
    return 1
