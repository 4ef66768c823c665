"""Reading recipe files: the bundled library, and a file an operator points Scout at (Scout's
format, or a runner's: spark-vllm-docker's or sparkrun's, runner_choice.py)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path

from pydantic import ValidationError

from tools.deploy.recipe_book.runner_choice import RUNNERS, is_runner_file, read_for_runner
from tools.deploy.recipe_book.schema import Recipe
from tools.deploy.recipe_book.sparkrun import RuntimeNotServed
from tools.text.validation import validation_problems
from tools.text.yaml_files import YAMLSyntaxError, load_yaml_as_pyyaml

NOT_RECIPES = frozenset({"engines.yaml", "practice.yaml"})


class RecipeError(ValueError):
    """A recipe file that cannot be used; `str()` is one line naming the file and what is wrong."""


class RecipeNotServed(RecipeError):
    """A runner's recipe that reads but runs on an engine Scout does not serve."""


def parse_recipe(text: str, origin: str, path: Path | None = None) -> Recipe:
    """One recipe from a file's text; RecipeError for bad YAML or a bad field. `path`: the
    file on this machine (a community recipe's mods are read from the repository around it)."""
    try:
        data, duplicates = load_yaml_as_pyyaml(text)
    except YAMLSyntaxError as exc:
        raise RecipeError(f"{origin}: {exc}") from None
    if not isinstance(data, dict):
        raise RecipeError(f"{origin}: a recipe is a YAML mapping, got {type(data).__name__}")
    try:
        if is_runner_file(data):  # its runner reads it with yaml.safe_load: the last value wins
            recipe = read_for_runner(data, origin, path)
            said = [
                f"{d}: {RUNNERS[recipe.runner or '']} keeps the last value, and so does Scout"
                for d in duplicates
            ]
            return recipe.model_copy(update={"not_applied": [*said, *recipe.not_applied]})
        if duplicates:  # Scout's own format: a key given twice is an error, as in settings
            raise duplicates[0]  # named with the file below
        return Recipe.model_validate({**data, "origin": origin})
    except RuntimeNotServed as exc:
        raise RecipeNotServed(f"{origin}: {exc}") from None
    except ValidationError as exc:
        raise RecipeError(f"{origin}: {'; '.join(validation_problems(exc))}") from None
    except ValueError as exc:
        raise RecipeError(f"{origin}: {exc}") from None


def read_recipe_file(path: str | Path) -> Recipe:
    where = Path(path).expanduser()
    try:
        text = where.read_text(encoding="utf-8")
    except OSError as exc:
        raise RecipeError(f"{where}: cannot read the recipe ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise RecipeError(f"{where}: not a text file") from None
    return parse_recipe(text, str(where), where)


@cache
def bundled_recipes() -> tuple[Recipe, ...]:
    """Scout's own library, by name."""
    folder = files("tools.deploy.recipe_book").joinpath("bundled")
    found = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml") and entry.name not in NOT_RECIPES:
            found.append(parse_recipe(entry.read_text(encoding="utf-8"), f"bundled/{entry.name}"))
    return tuple(found)
