"""plan_deployment's use of a recipe (recipe_book): which one and why, the engine version its
flags are checked against, and at the end the flags and env it adds to the launch, with the
plan's lines about it. Pure: the recipe file and config.json are read beforehand
(tools/deploy/plan/facts.py).

The engine version is the image probe's when the world model has it for the chosen image, else
the version the recipe states for its image (said as such), else unknown (every flag kept).
The KV shape the planner sets on the setup is the head's cached config.json, else the Hub's,
else the shape the recipe recorded, each with where it came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tools.checks import GB
from tools.checks.budget import DEFAULT_UTILIZATION, budgets_for
from tools.checks.fit_rule import Demand, fit_on
from tools.deploy.choices import DeployChoices
from tools.deploy.recipe_book.choose import apply_recipe, choose_recipe, refused_image
from tools.deploy.recipe_book.engines import launch_data
from tools.deploy.recipe_book.model_parsers import ModelParsers
from tools.deploy.recipe_book.model_shape import KvShape
from tools.deploy.recipe_book.schema import Recipe
from tools.deploy.recipe_book.versions import split_by_version
from tools.world.facts import HostFacts


class RecipeRefusal(Exception):
    """The plan cannot use this recipe or image; the message says why and what to do."""


@dataclass
class RecipeSetup:
    recipe: Recipe | None
    why: str
    image: str
    engine_version: str | None
    version_from: str
    shape: KvShape | None = None
    target: int | None = None
    element_bytes: int = 2
    notes: list[str] = field(default_factory=list)


def pick(
    params: DeployChoices, hosts: Mapping[str, HostFacts], given: Recipe | None = None
) -> RecipeSetup:
    """The recipe, its image (refused when known bad) and the engine version to check against."""
    gpus = [g.name for h in params.hosts if h in hosts for g in hosts[h].gpu.gpus]
    recipe, why = choose_recipe(params.model, params.recipe, gpus, given)
    base = launch_data(params.recipe)
    default = recipe.image.ref if recipe and recipe.image else base.image.ref
    image = params.image or default
    bad = refused_image(image, recipe)
    if bad is not None:
        raise RecipeRefusal(
            f"image {image} is known bad: {bad.why} ({bad.source}); choose another image "
            f"(the recipe's default is {default})"
        )
    version, where = _engine_version(image, base.engine, recipe, hosts, params.hosts)
    if recipe is not None and len(params.hosts) < recipe.min_nodes:
        raise RecipeRefusal(
            f"recipe {recipe.name} needs a cluster of at least {recipe.min_nodes} nodes "
            "(cluster_only); give more hosts"
        )
    setup = RecipeSetup(recipe, why, image, version, where)
    if recipe is not None:
        kept, _ = split_by_version(recipe.flags, version)
        fp8 = any(f.flag == "--kv-cache-dtype" and (f.value or "").startswith("fp8") for f in kept)
        setup.element_bytes = 1 if fp8 else 2
        setup.target = _context_target(recipe, setup.notes)
    if recipe is not None and recipe.max_nodes is not None:
        asked = params.nodes or (params.tensor_parallel or 1) * (params.pipeline_parallel or 1)
        if asked > recipe.max_nodes:
            raise RecipeRefusal(
                f"recipe {recipe.name} runs on one node only (solo_only; its runner refuses a "
                "cluster): leave nodes, tensor_parallel and pipeline_parallel unset"
            )
    return setup


def _context_target(recipe: Recipe, notes: list[str]) -> int | None:
    """The recipe's `max_model_len`: a number, or `auto` (vLLM sizes it to the KV cache; so
    does Scout, and says so)."""
    target = recipe.defaults.max_model_len
    if target is None:
        return None
    if str(target.value).strip().lower() == "auto":
        notes.append(
            f"max_model_len auto ({target.source}): Scout sizes the context to the KV cache "
            "left, as vLLM's auto does, and states the number"
        )
        return None
    try:
        return int(target.value)
    except (TypeError, ValueError):
        raise RecipeRefusal(
            f"recipe {recipe.name}: max_model_len `{target.value}` is neither a number nor auto"
        ) from None


def _engine_version(
    image: str,
    engine: str,
    recipe: Recipe | None,
    hosts: Mapping[str, HostFacts],
    order: list[str],
) -> tuple[str | None, str]:
    for host in (h for h in order if h in hosts):
        for img in hosts[host].docker.images:
            if f"{img.repository}:{img.tag or 'latest'}" == image and img.contents is not None:
                found = getattr(img.contents, engine, None)
                if found:
                    return found, f"the image probe of {image} on {host}"
    stated = recipe.image if recipe is not None else None
    if stated is not None and stated.ref == image and stated.engine_version:
        return recipe.image.engine_version, f"as recipe {recipe.name} states for {image}"
    base = launch_data("sglang" if engine == "sglang" else "vllm-ray").image
    if base.ref == image and base.engine_version:
        return base.engine_version, f"as Scout's engine data states for {image}"
    return None, f"{image} not probed yet"


def finish(
    setup: RecipeSetup, choices: DeployChoices, parsers: tuple[ModelParsers, str] | None = None
) -> tuple[DeployChoices, list[str], list[str]]:
    """The choices with the recipe's flags and env, the plan's lines, and unfilled `{param}`s;
    with no recipe, vLLM's parsers for the model's family (`parsers`: from its config files)."""
    values = {
        "model": choices.model,
        "tensor_parallel": choices.tensor_parallel,
        "pipeline_parallel": choices.pipeline_parallel,
        "gpu_memory_utilization": choices.gpu_memory_utilization,
        "max_model_len": choices.max_model_len,
        "port": choices.port,
        "host": "0.0.0.0",
    }
    applied = apply_recipe(
        setup.recipe, setup.why, choices.recipe, setup.engine_version, setup.version_from, values
    )
    files = {f.name: f.text for f in setup.recipe.workspace_files} if setup.recipe else {}
    notes = [*applied.notes, *setup.notes]
    if (
        setup.recipe is None
        and parsers is not None
        and launch_data(choices.recipe).engine == "vllm"
    ):
        found, where = parsers
        applied.flags += found.flags()
        notes.append(found.line(where))
    done = choices.model_copy(
        update={"serve_flags": applied.flags, "serve_env": applied.env, "serve_files": files}
    )
    return done, notes, applied.problems


def trade_off(
    setup: RecipeSetup, choices: DeployChoices, hosts: Mapping[str, HostFacts]
) -> str | None:
    """One line when another published checkpoint fits fewer nodes than this plan uses, as the
    fit rule judges it on the plan's first nodes."""
    if setup.recipe is None or len(choices.hosts) < 2:
        return None
    utilization = choices.gpu_memory_utilization or DEFAULT_UTILIZATION
    for alt in setup.recipe.alternatives:
        budgets = budgets_for(hosts, choices.hosts[: alt.nodes])
        demand = Demand(round(alt.size_gb * GB))
        verdicts = [fit_on(b, demand, alt.nodes, utilization) for b in budgets]
        held = len(verdicts) == alt.nodes and all(v.holds_once_freed for v in verdicts)
        if alt.nodes < len(choices.hosts) and held:
            return (
                f"trade-off: {alt.says} ({alt.model}, {alt.size_gb:g} GB; {alt.source}); "
                f"this plan proceeds with {choices.model} as asked"
            )
    return None
