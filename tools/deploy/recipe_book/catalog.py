"""The recipes Scout can see: its bundled library, and folders the operator names (a folder of
recipe files, a clone of spark-vllm-docker, whose recipes live under `recipes/`, or a sparkrun
registry, whose `.sparkrun/registry.yaml` names its recipe folders), each file
read or refused with its one-line reason, and the warnings about what Scout cannot provide."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tools.deploy.recipe_book.community_mods import RUNNER_SCRIPT
from tools.deploy.recipe_book.load import (
    RecipeError,
    RecipeNotServed,
    bundled_recipes,
    read_recipe_file,
)
from tools.deploy.recipe_book.runner_declaration import MANIFEST, registries
from tools.deploy.recipe_book.schema import Recipe

SUFFIXES = (".yaml", ".yml")


@dataclass
class Entry:
    """One file: its recipe, or why it does not read, or (`skipped`) why a file that reads
    gives no plan; warnings never stop it."""

    path: str
    recipe: Recipe | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    skipped: str | None = None


def recipe_paths(target: Path) -> list[Path]:
    """The recipe files of a file or folder: a spark-vllm-docker clone's `recipes/` folder, or
    every YAML file under the folder."""
    if target.is_file():
        return [target]
    if (target / RUNNER_SCRIPT).is_file() and (target / "recipes").is_dir():
        target = target / "recipes"
    folders = [target]
    if (target / MANIFEST).is_file():  # a sparkrun registry: the recipe folders it declares
        folders = [r.recipes for r in registries(target) if r.recipes.is_dir()] or folders
    found = {p for f in folders for p in f.rglob("*") if p.suffix in SUFFIXES and p.is_file()}
    return sorted(found)


def read_entry(path: Path) -> Entry:
    try:
        recipe = read_recipe_file(path)
    except RecipeNotServed as exc:
        return Entry(str(path), error=str(exc), skipped=str(exc))
    except RecipeError as exc:
        return Entry(str(path), error=str(exc))
    warnings = list(recipe.not_applied)
    warnings += [f"flag left out: {why}" for why in recipe.left_out.values()]
    if recipe.build is not None:
        warnings.append(
            f"image {recipe.image.ref if recipe.image else '?'} is built, never pulled "
            f"(`{recipe.build}` in a spark-vllm-docker checkout), unless a node has it"
        )
    if recipe.runner is not None:
        warnings.append(f"read as {recipe.runner} runs it: {recipe.runner_said}")
    warnings += recipe.runner_differences
    return Entry(str(path), recipe, warnings=warnings)


def entries(targets: list[Path]) -> list[Entry]:
    """Every file under `targets`, read; an unreadable target is an entry with its reason."""
    found: list[Entry] = []
    for target in targets:
        if not target.exists():
            found.append(Entry(str(target), error=f"{target}: no such file or folder"))
            continue
        found += [read_entry(p) for p in recipe_paths(target)]
    return found


def visible(folders: list[Path]) -> list[Entry]:
    """The bundled recipes, then the folders' (the operator's own, or a clone)."""
    bundled = [Entry(f"bundled/{r.name}", r) for r in bundled_recipes()]
    return bundled + entries(folders)


def find(name: str, folders: list[Path]) -> list[Entry]:
    """The recipes called `name` (a recipe's name or its file's stem, in any case), or the
    file at `name`; more than one when several carry the name."""
    path = Path(name).expanduser()
    if path.is_file():
        return [read_entry(path)]
    wanted = name.lower()
    return [
        entry
        for entry in visible(folders)
        if entry.recipe is not None
        and wanted in (entry.recipe.name.lower(), Path(entry.path).stem.lower())
    ]
