"""Picking the recipe for a deployment, and applying it: the flags the engine's version knows
with their `{param}`s filled, the env, and the lines the plan says about it (which recipe and
why, what was left out, what cannot be applied, the trade-off)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from tools.deploy.recipe_book.community import PLANNED
from tools.deploy.recipe_book.engines import engine_book, launch_data
from tools.deploy.recipe_book.load import bundled_recipes
from tools.deploy.recipe_book.runner_choice import RUNNERS
from tools.deploy.recipe_book.runner_declaration import SPARKRUN
from tools.deploy.recipe_book.runner_template import TemplateError, fill, read_command, words
from tools.deploy.recipe_book.schema import BadImage, Recipe
from tools.deploy.recipe_book.sparkrun_template import fill_lenient
from tools.deploy.recipe_book.versions import split_by_version

ENGINES = {"vllm-ray": "vllm", "vllm-multinode": "vllm", "sglang": "sglang"}
_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class RecipeMismatch(ValueError):
    """The operator's recipe cannot serve what was asked; the message says why."""


def matches(recipe: Recipe, model: str) -> bool:
    return any(fnmatchcase(model.lower(), pattern.lower()) for pattern in recipe.models)


def choose_recipe(
    model: str, launch: str, gpus: Sequence[str], given: Recipe | None = None
) -> tuple[Recipe | None, str]:
    """The recipe and why: the operator's, else the bundled one for this model, engine and
    hardware; None (with the reason) when none fits."""
    engine = ENGINES[launch]
    if given is not None:
        if not matches(given, model):
            raise RecipeMismatch(
                f"recipe {given.name} ({given.origin}) serves {', '.join(given.models)}, "
                f"not {model}"
            )
        if given.engine != engine:
            raise RecipeMismatch(f"recipe {given.name} runs {given.engine}, not {launch}")
        return given, f"recipe {given.name} from {given.origin}, as asked"
    for recipe in bundled_recipes():
        if not matches(recipe, model) or recipe.engine != engine:
            continue
        hardware = [h for h in recipe.hardware if not _on(h, gpus)]
        if recipe.hardware and gpus and hardware:
            continue
        where = f" on {', '.join(recipe.hardware)}" if recipe.hardware else ""
        return recipe, f"recipe {recipe.name} ({recipe.origin}): written for {model}{where}"
    return None, f"no recipe for {model} with {engine}: the engine's own defaults"


def _on(hardware: str, gpus: Sequence[str]) -> bool:
    return all(hardware.lower() in g.lower() for g in gpus)


def refused_image(image: str, recipe: Recipe | None) -> BadImage | None:
    """The known-bad entry for this image (the recipe's, then every engine's), if any."""
    bad = [*(recipe.known_bad_images if recipe else []), *engine_book().known_bad_images]
    return next((b for b in bad if b.ref == image), None)


@dataclass
class AppliedRecipe:
    """What a recipe adds to the launch: serve flags (filled), env, and what the plan says."""

    name: str | None
    flags: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # unfilled `{param}`s


def apply_recipe(
    recipe: Recipe | None,
    why: str,
    launch: str,
    engine_version: str | None,
    version_from: str,
    values: Mapping[str, object],
) -> AppliedRecipe:
    """The recipe's flags and env for this engine version (the launch's own are added where
    the launch is built); `values`: what the plan computed (tensor_parallel, max_model_len,
    port, …) for `{param}`s."""
    base = launch_data(launch)
    applied = AppliedRecipe(recipe.name if recipe else None, notes=[why])
    params: dict[str, object] = {}
    if recipe is not None:
        params.update(recipe.params)
        params.update(
            {k: d.value for k, d in recipe.defaults if d is not None}  # type: ignore[union-attr]
        )
    if recipe is not None and recipe.command is not None:
        planned = {k: v for k, v in values.items() if v is not None}
        own = {k: v for k, v in planned.items() if k in recipe.planned_keys or k not in params}
        _apply_command(recipe, {**params, **own}, applied)
        return applied
    params.update({k: v for k, v in values.items() if v is not None})
    flags = [*(recipe.flags if recipe else [])]
    kept, left_out = split_by_version(flags, engine_version)
    for flag in kept:
        words = [_fill(w, params, applied.problems) for w in flag.words()]
        applied.flags.append(shlex.join(words))
    if engine_version is None and any(f.since for f in flags):
        applied.notes.append(
            f"{base.engine} version unknown ({version_from}): every flag of the recipe kept; "
            "one the engine lacks stops it at its argument parser"
        )
    if left_out:
        applied.notes.append(
            f"left out for {base.engine} {engine_version} ({version_from}): "
            + ", ".join(f"{f.flag} (needs {f.since})" for f in left_out)
        )
    for var in recipe.env if recipe else []:
        applied.env[var.name] = _fill(var.value, params, applied.problems)
    _say_not_applied(recipe, applied)
    return applied


def _apply_command(recipe: Recipe, params: dict[str, object], applied: AppliedRecipe) -> None:
    """A community recipe as its runner fills it (runner_template.py): the command's flags
    less those Scout sets and those naming a file Scout cannot provide, the env verbatim."""
    render = fill_lenient if recipe.runner == SPARKRUN else fill
    try:
        serve = read_command(words(render(recipe.command or "", params)))
    except TemplateError as exc:
        applied.problems.append(str(exc))
        return
    dropped = []
    for group in serve.flags:
        if group[0] in PLANNED:
            continue
        lacking = [recipe.left_out[w] for w in group if w in recipe.left_out]  # flag or file
        if lacking:
            dropped.append(f"{shlex.join(group)} ({'; '.join(lacking)})")
            continue
        applied.flags.append(shlex.join(group))
    applied.env = {var.name: var.value for var in recipe.env}
    if recipe.runner is not None:
        applied.notes.append(f"run as {RUNNERS[recipe.runner]} runs it ({recipe.runner_said})")
        applied.notes += recipe.runner_differences
    if dropped:
        applied.notes.append("flags left out: " + "; ".join(dropped))
    _say_not_applied(recipe, applied)


def _say_not_applied(recipe: Recipe | None, applied: AppliedRecipe) -> None:
    if recipe is not None and recipe.not_applied:
        applied.notes.append(
            "not applied by Scout (approve the plan to proceed without them, or stop): "
            + "; ".join(recipe.not_applied)
        )


def _fill(text: str, params: Mapping[str, object], problems: list[str]) -> str:
    def one(match: re.Match[str]) -> str:
        key = match[1]
        if key not in params:
            problems.append(f"`{{{key}}}` has no value (not in the recipe's defaults)")
            return match[0]
        value = params[key]
        return f"{value:g}" if isinstance(value, float) else str(value)

    return _PARAM.sub(one, text)
