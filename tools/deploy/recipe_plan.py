"""plan_deployment's use of a recipe (recipe_book): which one and why, the engine version its
flags are checked against, the model's KV shape for the context length, and at the end the
flags and env it adds to the launch, with the plan's lines about it.

The engine version is the image probe's when the world model has it for the chosen image, else
the version the recipe states for its image (said as such), else unknown (every flag kept).
The KV shape is read from the head's cached snapshot of config.json, else the Hub's, else the
shape the recipe recorded, each with where it came from.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from tools.checks import GB
from tools.checks.budget import budgets_for
from tools.checks.layout import KV_HEADROOM_FRACTION
from tools.deploy.choices import DeployChoices
from tools.deploy.fit import HUB_URL, cache_dir
from tools.deploy.recipe_book.choose import apply_recipe, choose_recipe, refused_image
from tools.deploy.recipe_book.engines import launch_data
from tools.deploy.recipe_book.load import RecipeError, parse_recipe, read_recipe_file
from tools.deploy.recipe_book.model_shape import KvShape, shape_from_config, shape_from_recipe
from tools.deploy.recipe_book.schema import Recipe
from tools.deploy.recipe_book.versions import split_by_version
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool
from tools.web.page_fetcher import PageFetcher
from tools.world.facts import HostFacts


class HostReach(Protocol):
    """What reading a recipe file or a model's shape needs of the calling tool's context (a
    ToolContext is one): the session's SSH pool, absent when no inventory is loaded, and its
    web fetcher."""

    @property
    def ssh(self) -> SSHPool | None: ...

    @property
    def web(self) -> PageFetcher | None: ...


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


async def load_given(params: DeployChoices, ctx: HostReach) -> Recipe | None:
    """The operator's recipe file: `HOST:PATH` is read on that inventory host (a checkout of
    spark-vllm-docker on the head), anything else on Scout's machine."""
    if not params.recipe_file:
        return None
    host, sep, path = params.recipe_file.partition(":")
    if not sep or ctx.ssh is None or host not in set(ctx.ssh.inventory.names()):
        return read_recipe_file(params.recipe_file)
    try:
        home, rest = ("~/", path[2:]) if path.startswith("~/") else ("", path)
        result = await ctx.ssh.run(host, f"cat {home}{shlex.quote(rest)}", timeout=30)
    except SSHError as exc:
        raise RecipeError(f"{params.recipe_file}: cannot read it over SSH ({exc})") from None
    if not result.ok:
        said = (result.stderr or result.stdout).strip().splitlines()
        raise RecipeError(f"{params.recipe_file}: {said[0] if said else 'cat failed'}")
    return parse_recipe(result.stdout, params.recipe_file)


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
        target = recipe.defaults.max_model_len
        setup.target = int(target.value) if target is not None else None
    return setup


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


async def read_shape(setup: RecipeSetup, params: DeployChoices, ctx: HostReach) -> None:
    """The model's KV shape: the head's cached config.json, the Hub's, or the recipe's."""
    folder = cache_dir(params.model, params.hf_cache)
    if ctx.ssh is not None and params.head in set(ctx.ssh.inventory.names()):
        ref = f"{folder}/refs/main"
        command = f'cat {folder}/snapshots/"$(cat {ref})"/config.json'
        try:
            result = await ctx.ssh.run(params.head, command, timeout=30)
            if result.ok:
                setup.shape = _parse(result.stdout, f"config.json cached on {params.head}")
        except SSHError:
            pass
    if setup.shape is None and ctx.web is not None:
        url = f"{HUB_URL}/{params.model}/resolve/main/config.json"
        try:
            download = await ctx.web.fetch(url)
            if download.status == 200:
                setup.shape = _parse(download.body.decode(errors="replace"), url)
        except Exception:  # the Hub is one of three places to look; the next one answers
            pass
    if setup.shape is None and setup.recipe is not None and setup.recipe.model_shape:
        setup.shape = shape_from_recipe(setup.recipe.model_shape, setup.recipe.name)


def _parse(text: str, source: str) -> KvShape | None:
    try:
        return shape_from_config(json.loads(text), source)
    except ValueError:
        return None


def finish(
    setup: RecipeSetup, choices: DeployChoices
) -> tuple[DeployChoices, list[str], list[str]]:
    """The choices with the recipe's flags and env, the plan's lines, and unfilled `{param}`s."""
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
    done = choices.model_copy(update={"serve_flags": applied.flags, "serve_env": applied.env})
    return done, [*applied.notes, *setup.notes], applied.problems


def trade_off(
    setup: RecipeSetup, choices: DeployChoices, hosts: Mapping[str, HostFacts]
) -> str | None:
    """One line when another published checkpoint fits fewer nodes than this plan uses."""
    if setup.recipe is None or len(choices.hosts) < 2:
        return None
    budgets = budgets_for(hosts, [choices.head])
    if not budgets:
        return None
    room = budgets[0].usable_freed(choices.gpu_memory_utilization or 0.8)
    for alt in setup.recipe.alternatives:
        need = alt.size_gb * GB * (1 + KV_HEADROOM_FRACTION)
        if alt.nodes < len(choices.hosts) and need <= room:
            return (
                f"trade-off: {alt.says} ({alt.model}, {alt.size_gb:g} GB; {alt.source}); "
                f"this plan proceeds with {choices.model} as asked"
            )
    return None
