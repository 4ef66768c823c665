"""Which runner a recipe file's repository declares, and where that runner finds its mods.

Two runners read the same YAML with different rules, so a file is run as the runner its
repository declares. A sparkrun registry declares itself with `.sparkrun/registry.yaml`
(spark-arena/sparkrun@0041b8f `RegistryManager._discover_manifest_entries`: a list
`registries` of `name`, `recipes`/`subpath`, `mods`/`mods_subpath`, …); spark-vllm-docker's
repository is the one holding its runner, `run-recipe.py`. The nearest declaration above the file
wins. A file that no repository declares is told apart by its own keys (`sparkrun_signs`).

sparkrun resolves a mod (src/sparkrun/core/mods.py `resolve_mod`) as `@registry/rel` under that
registry's mods folder, then next to the recipe (`rel`, `mods/rel`), then in the recipe's own
registry's mods folder, then in the `eugr` registry (spark-vllm-docker's `mods/`); a folder is a
mod when it holds `run.sh`. Scout looks in the same order: in the file's repository (and in
spark-vllm-docker's `mods/` when the file lies in that repository), then in the clones sparkrun
keeps on this machine (~/.cache/sparkrun/registries, core/registry.py `_cache_dir`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.deploy.recipe_book.community_mods import RUNNER_SCRIPT
from tools.text.yaml_files import YAMLSyntaxError, load_yaml_as_pyyaml

MANIFEST = Path(".sparkrun") / "registry.yaml"
SPARKRUN = "sparkrun"
COMMUNITY = "spark-vllm-docker"
# keys sparkrun knows (src/sparkrun/core/recipe.py `_KNOWN_KEYS`) that run-recipe.py does not
SPARKRUN_ONLY_KEYS = frozenset(
    {"sparkrun_version", "model_revision", "runtime", "runtime_version", "mode", "min_nodes"}
    | {"max_nodes", "runtime_config", "benchmark", "metadata", "pre_exec", "post_exec"}
    | {"post_commands", "stop_after_post", "builder", "builder_config", "executor_config"}
    | {"distribution_config"}
)


@dataclass(frozen=True)
class Registry:
    """One registry a manifest declares: its recipes folder and its mods folder (if any)."""

    name: str
    recipes: Path
    mods: Path | None


@dataclass(frozen=True)
class Declaration:
    """The runner a file is run as, and why (`said`: one line for the plan)."""

    runner: str
    said: str
    root: Path | None = None
    registry: Registry | None = None
    registries: tuple[Registry, ...] = field(default_factory=tuple)


def declared(path: Path | None) -> Declaration | None:
    """The nearest declaration above `path`, or None when no repository declares a runner."""
    if path is None:
        return None
    for folder in path.resolve().parents:
        manifest = folder / MANIFEST
        if manifest.is_file():
            declares = registries(folder)
            mine = next((r for r in declares if _under(path, r.recipes)), None)
            named = f"registry `{mine.name}`" if mine else "a registry"
            return Declaration(
                SPARKRUN, f"{named} declared by {manifest}", folder, mine, tuple(declares)
            )
        if (folder / RUNNER_SCRIPT).is_file():
            return Declaration(COMMUNITY, f"spark-vllm-docker's repository {folder}", folder)
    return None


def sparkrun_signs(data: dict[str, Any]) -> list[str]:
    """What marks an undeclared file as sparkrun's: a key only sparkrun knows, or no `command`
    (sparkrun's runtime writes one from `defaults`; run-recipe.py requires it). A
    `recipe_version` is no sign: run-recipe.py reads any as "1" and says so."""
    signs = [f"key `{k}`" for k in sorted(SPARKRUN_ONLY_KEYS & set(data))]
    if "command" not in data and "model" in data and "container" in data:
        signs.append("no `command`")
    return signs


def mod_folder(mod: str, path: Path | None, where: Declaration | None) -> Path | None:
    """The folder of `mod` as sparkrun resolves it, where this machine holds it."""
    registries = where.registries if where else ()
    name, rel = _scoped(mod)
    candidates: list[Path] = []
    if name is not None:
        candidates += [r.mods / rel for r in registries if r.name == name and r.mods]
    elif path is not None:
        candidates += [path.parent / rel, path.parent / "mods" / rel]
    mine = where.registry if where else None
    if name is None and mine is not None and mine.mods is not None:
        candidates.append(mine.mods / rel)
    if name in (None, "eugr") and where is not None and where.runner == COMMUNITY and where.root:
        candidates.append(where.root / "mods" / rel)  # the `eugr` registry is this repository
    candidates += _cached(name or "eugr", rel)
    return next((c for c in candidates if (c / "run.sh").is_file()), None)


def _cached(name: str, rel: str) -> list[Path]:
    """The mod in sparkrun's own clone of registry `name` on this machine
    (~/.cache/sparkrun/registries/NAME, its mods folder as ~/.config/sparkrun/registries.yaml
    names it; the `eugr` fallback's is `mods`)."""
    configured = Path.home() / ".config" / "sparkrun" / "registries.yaml"
    subpath = "mods" if name == "eugr" else ""
    try:
        data, _ = load_yaml_as_pyyaml(configured.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, YAMLSyntaxError):
        data = None
    entries = data.get("registries") if isinstance(data, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("name") == name and entry.get("mods_subpath"):
            subpath = str(entry["mods_subpath"])
    if not subpath:
        return []
    return [Path.home() / ".cache" / "sparkrun" / "registries" / name / subpath / rel]


def _scoped(mod: str) -> tuple[str | None, str]:
    if mod.startswith("@") and "/" in mod:
        name, rel = mod.split("/", 1)
        return name[1:], rel.removeprefix("mods/")
    return None, mod.removeprefix("mods/")


def registries(root: Path) -> list[Registry]:
    """The registries `root`'s manifest declares; a manifest Scout cannot read declares sparkrun
    all the same, with no registry."""
    try:
        data, _ = load_yaml_as_pyyaml((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, YAMLSyntaxError):
        return []
    entries = data.get("registries") if isinstance(data, dict) else None
    found = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not entry.get("name"):
            continue
        recipes = str(entry.get("subpath", entry.get("recipes", "recipes")))
        mods = entry.get("mods_subpath", entry.get("mods", ""))
        found.append(
            Registry(str(entry["name"]), root / recipes, root / str(mods) if mods else None)
        )
    return found


def _under(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True
