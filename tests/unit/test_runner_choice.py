"""One file, two runners: Scout follows the runner the repository declares, says which, and
names every way the other runner would run the file differently (real community recipe)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.runner_table import RECIPES
from tools.deploy.recipe_book.choose import apply_recipe
from tools.deploy.recipe_book.load import RecipeError, parse_recipe, read_recipe_file

ULTRA = RECIPES / "4x-spark-cluster" / "nemotron-3-ultra-nvfp4.yaml"  # JSON written as {{ }}
SINGLE = '--speculative-config {"method":"mtp"'
DOUBLE = '--speculative-config {{"method":"mtp"'


VALUES = {"tensor_parallel": 4, "pipeline_parallel": 1, "port": 8000, "host": "0.0.0.0"}


def test_undeclared_the_community_runner_unescapes_braces_and_sparkruns_difference_is_said():
    recipe = read_recipe_file(ULTRA)
    assert recipe.runner == "spark-vllm-docker"
    assert any(f.text().startswith(SINGLE) for f in recipe.flags)
    difference = next(d for d in recipe.runner_differences if "passes" in d)
    assert difference.startswith(f"under sparkrun: passes {DOUBLE}")
    applied = apply_recipe(recipe, "asked", "vllm-ray", None, "not probed", VALUES)
    assert any(
        n.startswith("run as spark-vllm-docker's run-recipe.py runs it") for n in applied.notes
    )


def test_in_a_sparkrun_registry_the_same_file_passes_the_braces_as_written(tmp_path: Path):
    (tmp_path / ".sparkrun").mkdir()
    (tmp_path / ".sparkrun" / "registry.yaml").write_text(
        "registries:\n  - name: mine\n    recipes: recipes\n"
    )
    (tmp_path / "recipes").mkdir()
    path = Path(shutil.copy(ULTRA, tmp_path / "recipes"))
    recipe = read_recipe_file(path)
    assert recipe.runner == "sparkrun" and "registry `mine`" in recipe.runner_said
    applied = apply_recipe(recipe, "asked", "vllm-ray", None, "not probed", VALUES)
    assert any(f.startswith(f"--speculative-config '{DOUBLE[21:]}") for f in applied.flags)
    assert any(d.startswith(f"under spark-vllm-docker: passes {SINGLE}") for d in applied.notes)


def test_an_undeclared_file_with_a_key_neither_runner_reads_is_refused_saying_how_to_run_it():
    text = ULTRA.read_text() + "extra: 1\n"
    with pytest.raises(RecipeError, match=r"unknown key\(s\) extra .*registry\.yaml"):
        parse_recipe(text, "x.yaml")
