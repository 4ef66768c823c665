"""Recipes by name: the exact commands per host for one engine, from the fabric and the choices."""

from __future__ import annotations

from collections.abc import Callable

from tools.deploy.choices import DeployChoices
from tools.deploy.fabric.paths import FabricPath
from tools.deploy.launch import sglang, vllm_multinode, vllm_ray
from tools.deploy.launch.parts import Recipe

RecipeBuilder = Callable[[DeployChoices, dict[str, FabricPath]], Recipe]
BUILDERS: dict[str, RecipeBuilder] = {
    "vllm-ray": vllm_ray.build,
    "vllm-multinode": vllm_multinode.build,
    "sglang": sglang.build,
}


def build_recipe(
    choices: DeployChoices,
    fabric: dict[str, FabricPath],
    *,
    install_ray: frozenset[str] = frozenset(),
) -> Recipe:
    """The recipe the user chose, with every default resolved; `install_ray`: the nodes whose
    image has no Ray (vllm-ray installs it into their containers)."""
    if choices.recipe == "vllm-ray":
        return vllm_ray.build(choices.resolved(), fabric, install_ray)
    return BUILDERS[choices.recipe](choices.resolved(), fabric)
