"""A recipe as the commands Scout would run for it, before any inventory is probed.

`scout recipes show` prints this: the image and how it arrives, the layout the recipe asks for
(recipe_topology.py), the env of every node's container, the files written into it, the serve
command on the head (built by the same functions the plan's launch step uses) and the lines the
plan would say about the recipe. What only the hosts can tell (the fabric env, the memory left,
so a fraction or context the recipe leaves open) is the plan's: plan_deployment with
`recipe_file` gives it on the real inventory or the simulator.
"""

from __future__ import annotations

from tools.deploy.choices import DeployChoices
from tools.deploy.launch.parts import engine_flags, own_flags, parallel_flags
from tools.deploy.launch.topology import apply_topology, asked_settings, asked_topology
from tools.deploy.recipe_book.choose import apply_recipe
from tools.deploy.recipe_book.schema import Recipe

PLACEHOLDERS = 64  # node names offered while the recipe's own size is found


def preview(recipe: Recipe, hosts: list[str] | None = None) -> list[str]:
    """The lines of `scout recipes show`; TopologyRefusal when the hosts cannot hold it."""
    offered = hosts or [f"node-{i}" for i in range(1, PLACEHOLDERS + 1)]
    choices = DeployChoices(model=recipe.models[0], hosts=offered, recipe=recipe.launch)
    topology = asked_topology(recipe, choices, {})
    nodes = topology.nodes if topology else (len(hosts) if hosts else recipe.min_nodes)
    choices = choices.model_copy(update={"hosts": offered[:nodes]})
    if topology is not None:
        choices = apply_topology(choices, topology)
    choices = choices.model_copy(update=asked_settings(recipe, choices)).resolved()
    values = {
        "model": choices.model,
        "tensor_parallel": choices.tensor_parallel,
        "pipeline_parallel": choices.pipeline_parallel,
        "gpu_memory_utilization": choices.gpu_memory_utilization,
        "max_model_len": choices.max_model_len,
        "port": choices.port,
        "host": "0.0.0.0",
    }
    why = f"recipe {recipe.name} from {recipe.origin}"
    applied = apply_recipe(recipe, why, recipe.launch, None, "not probed", values)
    choices = choices.model_copy(update={"serve_flags": applied.flags, "serve_env": applied.env})
    image = recipe.image.ref if recipe.image else choices.image
    lines = [f"recipe {recipe.name} ({recipe.origin}): {recipe.description}"]
    lines.append(f"  model: {choices.model}; engine: {recipe.engine}")
    how = f"built, never pulled: `{recipe.build}`" if recipe.build else "pulled where missing"
    lines.append(f"  image: {image} ({how})")
    layout = topology.label + f" ({topology.why})" if topology else f"Scout's chooser, {nodes}+"
    lines.append(f"  layout: {layout}; nodes {', '.join(choices.hosts)}")
    env = " ".join(f"{k}={v}" for k, v in applied.env.items())
    lines.append(f"  container env (every node, with the fabric's): {env or '(none)'}")
    files = recipe.workspace_files
    lines += [f"  file written into the container: {f.name} ({f.source})" for f in files]
    serve = [f"vllm serve {choices.model}", *parallel_flags(choices), *own_flags(choices)]
    serve += [f"--host 0.0.0.0 --port {choices.port}", *engine_flags(choices, vllm=True)]
    lines.append(f"  serve on {choices.head}: " + " ".join(serve))
    if recipe.defaults.gpu_memory_utilization is None:
        lines.append("  --gpu-memory-utilization: the recipe passes none; the plan sizes it")
    lines += [f"  problem: {p}" for p in applied.problems]
    lines += [f"  note: {n}" for n in applied.notes[1:]]
    return lines
