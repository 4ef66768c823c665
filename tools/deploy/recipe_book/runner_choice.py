"""A runner's recipe file read by the runner that would run it, and how the other would differ.

spark-vllm-docker's run-recipe.py (community.py) and sparkrun (sparkrun.py) read the same YAML
with other rules: templating, unknown keys, topology, names, images. Scout follows the runner
the file's repository declares (runner_declaration.py); a file no repository declares is
sparkrun's when it carries a sign only sparkrun reads, else run-recipe.py's. The file is then
read the other runner's way too, and every way the two would run it differently is said.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.deploy.recipe_book.community import RUNNER, read_community
from tools.deploy.recipe_book.runner_declaration import (
    COMMUNITY,
    MANIFEST,
    SPARKRUN,
    Declaration,
    declared,
    sparkrun_signs,
)
from tools.deploy.recipe_book.schema import Recipe
from tools.deploy.recipe_book.sparkrun import read_sparkrun

RUNNERS = {COMMUNITY: RUNNER, SPARKRUN: "sparkrun"}  # each runner as the plan names it


def is_runner_file(data: dict[str, Any]) -> bool:
    """A runner's recipe names `command` or `model`; Scout's own names `models`, `image` and
    `flags`."""
    return "command" in data or "model" in data


def read_for_runner(data: dict[str, Any], origin: str, path: Path | None) -> Recipe:
    """The recipe as its runner reads it, naming the runner and the other's differences;
    ValueError (one line) when its runner would not run it."""
    where = declared(path)
    signs = sparkrun_signs(data)
    if where is not None:
        runner, said = where.runner, where.said
    elif signs:
        runner = SPARKRUN
        said = f"no repository declares its runner; sparkrun's by its {', '.join(signs)}"
    else:
        runner = COMMUNITY
        said = "no repository declares its runner; spark-vllm-docker's (no sign of sparkrun's)"
    try:
        recipe = _read(runner, data, origin, path, where)
    except ValueError as exc:
        if where is None and runner == COMMUNITY and "unknown key" in str(exc):
            raise ValueError(
                f"{exc}; sparkrun would keep them aside: in a repository with {MANIFEST} it "
                "is run as sparkrun's"
            ) from None
        raise
    other = COMMUNITY if runner == SPARKRUN else SPARKRUN
    try:
        theirs = _read(other, data, origin, path, where)
    except ValueError as exc:
        differences = [f"under {other}: refused ({exc})"]
    else:
        differences = [f"under {other}: {line}" for line in _compare(recipe, theirs)]
    return recipe.model_copy(
        update={"runner": runner, "runner_said": said, "runner_differences": differences}
    )


def _read(
    runner: str, data: dict[str, Any], origin: str, path: Path | None, where: Declaration | None
) -> Recipe:
    if runner == SPARKRUN:
        return read_sparkrun(data, origin, path, where)
    return read_community(data, origin, path)


def _compare(mine: Recipe, theirs: Recipe) -> list[str]:
    """Each way the other runner would run the file differently, one line each."""
    lines = []
    if mine.name != theirs.name:
        lines.append(f"named {theirs.name}, not {mine.name}")
    layout = _layout(mine), _layout(theirs)
    if layout[0] != layout[1]:
        lines.append(f"layout {layout[1]}, not {layout[0]}")
    flags = [f.text() for f in mine.flags], [f.text() for f in theirs.flags]
    only_mine = [f for f in flags[0] if f not in flags[1]]
    only_theirs = [f for f in flags[1] if f not in flags[0]]
    if only_mine or only_theirs:
        said = [f"passes {'; '.join(only_theirs)}"] if only_theirs else []
        said += [f"not {'; '.join(only_mine)}"] if only_mine else []
        lines.append(" and ".join(said))
    image = _image(mine), _image(theirs)
    if image[0] != image[1]:
        lines.append(f"image {image[1]}, not {image[0]}")
    env = {e.name: e.value for e in mine.env}, {e.name: e.value for e in theirs.env}
    if env[0] != env[1]:
        lines.append("another container env")
    return lines


def _layout(recipe: Recipe) -> str:
    """The sizes a runner starts the engine with: both runners take an unstated size as 1."""
    tp, pp = recipe.defaults.tensor_parallel, recipe.defaults.pipeline_parallel
    sizes = f"TP={tp.value if tp else 1} PP={pp.value if pp else 1}"
    most = recipe.max_nodes if recipe.max_nodes is not None else "any"
    return f"{sizes} on {recipe.min_nodes}..{most} nodes"


def _image(recipe: Recipe) -> str:
    ref = recipe.image.ref if recipe.image else "?"
    return f"{ref} ({'built' if recipe.build else 'pulled'})"
