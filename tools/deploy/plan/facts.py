"""What plan_deployment reads before it plans, over SSH and the web; the planner itself reads
nothing (tools/deploy/plan/planner.py).

Stale hosts are probed again; the model's size comes from the call, the world model or the Hub;
a cache outside the default folder is measured with `du`; the operator's recipe file is read
where it lies; the model's config.json and generation_config.json (its KV shape, its parsers)
from the head's HF cache, else the Hub's. After planning, the head's ssh into each worker
address its commands name is tried.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.checks import Finding
from tools.deploy.choices import DeployChoices
from tools.deploy.fabric.peer_ssh import peer_ssh_findings
from tools.deploy.plan.fit import (
    DEFAULT_HF_CACHE,
    GB,
    HUB_URL,
    ModelSizeError,
    cache_dir,
    du_command,
    size_from_du,
    size_from_hub,
)
from tools.deploy.plan.planner import ClusterFacts, DeploymentPlan
from tools.deploy.recipe_book.catalog import entries
from tools.deploy.recipe_book.load import RecipeError, parse_recipe, read_recipe_file
from tools.deploy.recipe_book.model_parsers import ModelParsers, parsers_from_config
from tools.deploy.recipe_book.model_shape import KvShape, shape_from_config
from tools.deploy.recipe_book.schema import Recipe
from tools.recon.probe import probe_hosts
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool
from tools.web.errors import WebFetchError
from tools.web.page_fetcher import PageFetcher
from tools.world.store import WorldStore


@dataclass(frozen=True)
class Reach:
    """What these reads go through: the session's SSH pool (plan_deployment exists only with an
    inventory), its web fetcher, and where a progress line is said."""

    pool: SSHPool
    web: PageFetcher | None
    report: Callable[[str], None]


async def cluster_facts(
    world: WorldStore, hosts: list[str], links_tried: list[str], max_age_s: float, reach: Reach
) -> ClusterFacts:
    """The world model's facts, stale hosts probed again first, and the inventory's word on
    each host: its address and, when it has one, the jump host it is reached through."""
    stale = world.stale_hosts(hosts, max_age_s)
    addresses: dict[str, str] = {}
    jumps: dict[str, str] = {}
    known = set(reach.pool.inventory.names())
    stale = [h for h in stale if h in known]
    if stale:
        reach.report(f"re-probing {', '.join(stale)} (facts missing or stale)")
        probe_round = await probe_hosts(reach.pool, stale)
        world.apply_round(probe_round.facts, probe_round.failures)
    for host in (h for h in hosts if h in known):
        spec = reach.pool.inventory.get(host)
        addresses[host] = spec.address
        if spec.jump:
            jumps[host] = spec.jump
    return ClusterFacts(
        hosts=world.hosts,
        unreachable=world.unreachable,
        addresses=addresses,
        jumps=jumps,
        links_tried=frozenset(links_tried),
    )


async def model_size(
    world: WorldStore, model: str, size_gb: float | None, reach: Reach
) -> tuple[int | None, str | None]:
    """The weights' bytes, and the Hub's current commit when the Hub was asked for them."""
    if size_gb is not None:
        return round(size_gb * GB), None
    if world.model_size_bytes is not None:
        return world.model_size_bytes, None
    fetcher = reach.web
    if fetcher is None:
        return None, None

    async def fetch(url: str) -> bytes:
        download = await fetcher.fetch(url)
        if download.status != 200:
            raise WebFetchError(f"{url} answered {download.status}")
        return download.body

    try:
        hub = await size_from_hub(model, fetch)
    except ModelSizeError as exc:
        reach.report(str(exc))
        return None, None
    return hub.size_bytes, hub.revision


async def measured_cache_sizes(choices: DeployChoices, reach: Reach) -> dict[str, int | None]:
    """`du` of the model on each host when hf_cache is not the default folder recon lists.

    None: not there or unknown. For the default folder the world model's facts already answer.
    """
    if choices.hf_cache == DEFAULT_HF_CACHE:
        return {}
    pool = reach.pool
    command = du_command(choices.model, choices.hf_cache)

    async def one(host: str) -> int | None:
        try:
            result = await pool.run(host, command, timeout=60)
        except SSHError:
            return None
        return size_from_du(result.stdout) if result.ok else None

    sizes = await asyncio.gather(*(one(h) for h in choices.hosts))
    return dict(zip(choices.hosts, sizes, strict=True))


async def given_recipe(choices: DeployChoices, reach: Reach) -> Recipe | None:
    """The operator's recipe file: `HOST:PATH` is read on that inventory host (a checkout of
    spark-vllm-docker on the head), anything else on Scout's machine. RecipeError: unreadable."""
    if not choices.recipe_file:
        return None
    host, sep, path = choices.recipe_file.partition(":")
    if not sep or host not in set(reach.pool.inventory.names()):
        return read_recipe_file(choices.recipe_file)
    try:
        home, rest = ("~/", path[2:]) if path.startswith("~/") else ("", path)
        result = await reach.pool.run(host, f"cat {home}{shlex.quote(rest)}", timeout=30)
    except SSHError as exc:
        raise RecipeError(f"{choices.recipe_file}: cannot read it over SSH ({exc})") from None
    if not result.ok:
        said = (result.stderr or result.stdout).strip().splitlines()
        raise RecipeError(f"{choices.recipe_file}: {said[0] if said else 'cat failed'}")
    return parse_recipe(result.stdout, choices.recipe_file)


def recipes_beside(choices: DeployChoices) -> tuple[Recipe, ...]:
    """The recipes beside the operator's own recipe file on this machine (the whole `recipes/`
    folder of a community checkout), where the plan looks for smaller quantisations; files
    that do not read are passed over (`scout recipes check` says why)."""
    if not choices.recipe_file or not Path(choices.recipe_file).expanduser().is_file():
        return ()
    here = Path(choices.recipe_file).expanduser().resolve()
    folder = next((p for p in here.parents if p.name == "recipes"), here.parent)
    return tuple(e.recipe for e in entries([folder]) if e.recipe is not None)


@dataclass(frozen=True)
class ModelFiles:
    """The model's own config.json and generation_config.json ({} when absent), and where."""

    config: dict[str, Any]
    generation: dict[str, Any]
    source: str

    @property
    def shape(self) -> KvShape | None:
        return shape_from_config(self.config, self.source)

    @property
    def parsers(self) -> ModelParsers | None:
        return parsers_from_config(self.config, self.generation)


async def model_files(choices: DeployChoices, reach: Reach) -> ModelFiles | None:
    """The model's config files from the head's HF cache, else the Hub (the planner falls back
    to the shape the recipe recorded)."""
    folder = cache_dir(choices.model, choices.hf_cache)
    if choices.head in set(reach.pool.inventory.names()):
        snapshot = f'{folder}/snapshots/"$(cat {folder}/refs/main)"'
        where = f"config.json cached on {choices.head}"
        config = await _cached(choices.head, f"{snapshot}/config.json", reach)
        if config:
            generation = await _cached(choices.head, f"{snapshot}/generation_config.json", reach)
            return ModelFiles(config, generation or {}, where)
    if reach.web is not None:
        url = f"{HUB_URL}/{choices.model}/resolve/main/config.json"
        config = await _from_hub(url, reach.web)
        if config:
            generation = await _from_hub(
                url.replace("config.json", "generation_config.json"), reach.web
            )
            return ModelFiles(config, generation or {}, url)
    return None


async def _cached(host: str, path: str, reach: Reach) -> dict[str, Any] | None:
    try:
        result = await reach.pool.run(host, f"cat {path}", timeout=30)
    except SSHError:
        return None
    return _parse(result.stdout) if result.ok else None


async def _from_hub(url: str, web: PageFetcher) -> dict[str, Any] | None:
    try:
        download = await web.fetch(url)
    except Exception:  # the Hub is one of three places to look; the next one answers
        return None
    return _parse(download.body.decode(errors="replace")) if download.status == 200 else None


def _parse(text: str) -> dict[str, Any] | None:
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


async def peer_refusals(deployment: DeploymentPlan, reach: Reach) -> list[Finding]:
    """Blockers for the worker addresses the head's commands name but its ssh cannot log in to."""
    targets = deployment.peer_targets
    if not targets:
        return []
    return await peer_ssh_findings(reach.pool, deployment.choices.head, targets)
