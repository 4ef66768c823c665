"""Which runner a recipe file's repository declares, on real repositories' files."""

from __future__ import annotations

from pathlib import Path

from tools.deploy.recipe_book.runner_declaration import (
    COMMUNITY,
    SPARKRUN,
    declared,
    mod_folder,
    sparkrun_signs,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "recipes"
ARENA = FIXTURES / "sparkrun-recipe-registry-3075780"
MINIMAX = ARENA / "experimental-recipes" / "eugr-vllm" / "minimax-m2.5-4x-vllm.yaml"


def test_a_sparkrun_manifest_declares_the_registry_whose_recipe_folder_holds_the_file():
    where = declared(MINIMAX)
    assert where is not None and where.runner == SPARKRUN
    assert where.registry is not None and where.registry.name == "experimental"
    assert where.registry.mods == ARENA / "experimental-mods"
    official = declared(next((ARENA / "official-recipes").rglob("*.yaml")))
    assert official is not None and official.registry and official.registry.name == "official"


def test_the_community_runner_declares_its_repository_and_a_bare_folder_declares_nothing(
    tmp_path,
):
    assert declared(FIXTURES / "sparkrun-mrpmorris-1ac937a" / "recipes" / "x.yaml") is None
    (tmp_path / "run-recipe.py").write_text("")
    (tmp_path / "recipes").mkdir()
    where = declared(tmp_path / "recipes" / "a.yaml")
    assert where is not None and where.runner == COMMUNITY and where.root == tmp_path


def test_a_mod_is_found_next_to_the_recipe_then_in_its_registrys_mods(tmp_path):
    (tmp_path / ".sparkrun").mkdir()
    (tmp_path / ".sparkrun" / "registry.yaml").write_text(
        "registries:\n  - name: mine\n    recipes: recipes\n    mods: shared\n"
    )
    recipe = tmp_path / "recipes" / "a.yaml"
    for folder in (tmp_path / "recipes" / "mods" / "near", tmp_path / "shared" / "far"):
        folder.mkdir(parents=True)
        (folder / "run.sh").write_text("#!/bin/bash\n")
    where = declared(recipe)
    assert mod_folder("mods/near", recipe, where) == tmp_path / "recipes" / "mods" / "near"
    assert mod_folder("far", recipe, where) == tmp_path / "shared" / "far"
    assert mod_folder("@mine/far", recipe, where) == tmp_path / "shared" / "far"
    assert mod_folder("@other/far", recipe, where) is None


def test_an_undeclared_file_shows_sparkrun_by_its_own_keys_or_a_missing_command():
    assert sparkrun_signs({"command": "vllm serve m", "solo_only": True}) == []
    assert sparkrun_signs({"command": "x", "runtime": "vllm", "metadata": {}}) == [
        "key `metadata`",
        "key `runtime`",
    ]
    assert sparkrun_signs({"model": "m", "container": "c"}) == ["no `command`"]


def test_a_mod_found_nowhere_else_comes_from_sparkruns_cached_eugr_registry(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    eugr = tmp_path / ".cache" / "sparkrun" / "registries" / "eugr" / "mods" / "fix-x"
    eugr.mkdir(parents=True)
    (eugr / "run.sh").write_text("#!/bin/bash\n")
    recipe = FIXTURES / "sparkrun-mrpmorris-1ac937a" / "recipes" / "a.yaml"
    assert mod_folder("mods/fix-x", recipe, None) == eugr
    assert mod_folder("@eugr/fix-x", recipe, None) == eugr
    assert mod_folder("@other/fix-x", recipe, None) is None  # no mods folder configured
