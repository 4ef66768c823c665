"""sparkrun's reading of real recipe files from users' sparkrun registries (copied under
tests/fixtures/recipes/sparkrun-*, each folder's SOURCE names the repository and commit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.faces.cli import main
from tools.deploy.launch.preview import preview
from tools.deploy.recipe_book.choose import apply_recipe
from tools.deploy.recipe_book.load import RecipeNotServed, read_recipe_file

FIXTURES = Path(__file__).parents[1] / "fixtures" / "recipes"
ARENA = FIXTURES / "sparkrun-recipe-registry-3075780"
STYLES = FIXTURES / "sparkrun-styles01-5af316e"
BARE = FIXTURES / "sparkrun-mrpmorris-1ac937a"
SCRIPTED = FIXTURES / "sparkrun-mfellner-e043f88" / "recipes"
MINIMAX = ARENA / "experimental-recipes" / "eugr-vllm" / "minimax-m2.5-4x-vllm.yaml"


def test_check_reads_every_real_sparkrun_registry_and_skips_a_runtime_scout_does_not_serve(
    capsys,
):
    assert main(["recipes", "check", "-q", str(ARENA), str(STYLES), str(BARE), str(SCRIPTED)]) == 0
    out = capsys.readouterr().out
    assert "13 of 13 recipe files read (1 for a runtime Scout does not serve)" in out
    assert "[skip]" in out and "runtime `ds4-cuda`" in out
    assert "[error]" not in out


def test_unknown_top_level_keys_are_kept_aside_and_the_file_names_the_recipe():
    recipe = read_recipe_file(STYLES / "recipes" / "qwen-35b.yaml")
    assert recipe.runner == "sparkrun" and "registry `styles01`" in recipe.runner_said
    assert recipe.name == "qwen-35b"  # the file's stem; its `name` is qwen-35b-nvfp4
    aside = next(line for line in recipe.not_applied if line.startswith("kept aside"))
    assert aside.endswith("maintainer, patches, variants")
    assert recipe.max_nodes == 1 and recipe.defaults.tensor_parallel is not None
    assert recipe.runner_differences[0].startswith("under spark-vllm-docker: refused (unknown")


def test_topology_comes_from_defaults_and_the_eugr_nightly_image_is_built_not_pulled():
    recipe = read_recipe_file(MINIMAX)
    assert recipe.min_nodes == 4 and recipe.defaults.tensor_parallel.value == 4  # type: ignore[union-attr]
    assert recipe.image is not None and recipe.image.ref == "sparkrun-eugr-vllm"
    assert recipe.build == "./build-and-copy.sh -t sparkrun-eugr-vllm --cleanup"
    shown = "\n".join(preview(recipe))
    assert "layout: TP=4 on 4 nodes" in shown
    assert "-tp" not in shown.split("serve on")[1].split("--tensor-parallel-size 4")[1]


def test_a_tp_written_in_the_command_sizes_nothing_under_sparkrun_and_the_difference_is_said(
    tmp_path,
):
    (tmp_path / ".sparkrun").mkdir()
    (tmp_path / ".sparkrun" / "registry.yaml").write_text("registries:\n  - name: t\n")
    path = tmp_path / "recipes" / "m.yaml"
    path.parent.mkdir()
    path.write_text(
        'recipe_version: "1"\nname: m\nmodel: MiniMaxAI/MiniMax-M2.5\ncontainer: vllm-node\n'
        "defaults:\n  port: 8000\ncommand: vllm serve MiniMaxAI/MiniMax-M2.5 -tp 4 --port {port}\n"
    )
    recipe = read_recipe_file(path)
    assert recipe.runner == "sparkrun" and recipe.defaults.tensor_parallel is None
    assert recipe.runner_differences == [
        "under spark-vllm-docker: layout TP=4 PP=1 on 1..any nodes, not TP=1 PP=1 on 1..any nodes"
    ]
    assert recipe.build == "./build-and-copy.sh -t vllm-node --cleanup"  # a v1 recipe: eugr


def test_a_recipe_without_command_is_served_by_the_command_its_runtime_writes():
    recipe = read_recipe_file(STYLES / "recipes" / "muse-glimmer-30b.yaml")
    assert recipe.engine == "sglang" and recipe.command is not None
    assert "--served-model-name muse-glimmer-30b" in [f.text() for f in recipe.flags]
    values = {"tensor_parallel": 1, "port": 8000, "host": "0.0.0.0", "model": recipe.models[0]}
    applied = apply_recipe(recipe, "asked", "sglang", None, "not probed", values)
    assert "--kv-cache-dtype fp8_e4m3" in applied.flags and not applied.problems
    assert any(n.startswith("run as sparkrun runs it (registry `styles01`") for n in applied.notes)


def test_an_image_naming_no_registry_is_pulled_by_the_docker_pull_builder_and_said():
    recipe = read_recipe_file(STYLES / "recipes" / "medgemma-27b.yaml")
    assert recipe.build is None
    assert any("vllm-node:latest names no registry" in n for n in recipe.not_applied)


def test_a_runtime_scout_does_not_serve_reads_as_not_served_with_its_reason():
    with pytest.raises(RecipeNotServed, match="runtime `ds4-cuda`"):
        read_recipe_file(STYLES / "recipes" / "deepseek-v4-flash-0731-ds4.yaml")


def test_an_undeclared_file_with_sparkruns_keys_is_read_as_sparkrun_and_says_why():
    recipe = read_recipe_file(next((BARE / "recipes").glob("nvidia__*.yaml")))
    assert recipe.runner == "sparkrun"
    assert recipe.runner_said.startswith("no repository declares its runner; sparkrun's by its")
    assert "key `runtime`" in recipe.runner_said


def test_a_served_model_name_the_command_leaves_out_is_appended_as_sparkrun_does(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text(
        "model: m/x\nruntime: vllm\ncontainer: vllm/vllm-openai:v0.24.0\n"
        "defaults:\n  served_model_name: x\ncommand: vllm serve {model} --port {port}\n"
    )
    recipe = read_recipe_file(path)
    assert [f.text() for f in recipe.flags] == ["--served-model-name x"]


def test_a_command_script_is_read_for_its_engine_statement_and_names_the_rest():
    recipe = read_recipe_file(SCRIPTED / "deepseek-v4-flash-0731-dspark-dual-spark-1m.yaml")
    assert recipe.command is not None and recipe.command.startswith("/usr/local/bin/vllm serve")
    assert "--tokenizer-mode deepseek_v4" in [f.text() for f in recipe.flags]
    said = [line for line in recipe.not_applied if line.startswith("`command` also runs")]
    assert len(said) == 6 and "export VLLM_HOST_IP=" in said[-1]
    assert "`post_exec`: commands sparkrun runs around the engine; not run by Scout" in (
        recipe.not_applied
    )
