"""spark-vllm-docker's recipe format as its runner defines it (run-recipe.py at 358bf26): the
template step, several values to one flag, `max_model_len: auto`, mods, a locally built image,
`solo_only`, and `scout recipes check` with and without the repository around the recipes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agent.faces.cli import main
from tests.support.runner_table import RECIPES
from tests.support.sparks import spark
from tools.checks import GB
from tools.deploy.choices import DeployChoices
from tools.deploy.plan.planner import (
    ClusterFacts,
    DeploymentPlan,
    Measured,
    PlanRefusal,
    plan_deployment,
)
from tools.deploy.recipe_book.load import RecipeError, parse_recipe, read_recipe_file
from tools.world.facts import Image

CHECKOUT = os.environ.get("SCOUT_SPARK_VLLM_DOCKER")
RECIPE = """\
recipe_version: "1"
name: Test Recipe
model: org/test-model
container: {container}
{extra}
defaults:
  port: 8000
  host: 0.0.0.0
  tensor_parallel: 2
  gpu_memory_utilization: 0.7
  max_model_len: {length}
  tokens: 3
command: |
  vllm serve org/test-model \\
    --port {{port}} --host {{host}} -tp {{tensor_parallel}} \\
    --gpu-memory-utilization {{gpu_memory_utilization}} --max-model-len {{max_model_len}} \\
    --speculative-config '{{{{"method":"mtp","num_speculative_tokens":{{tokens}}}}}}' \\
    --cudagraph-capture-sizes 5 10 15 20 \\
    --distributed-executor-backend ray {flags}
"""


def recipe_text(container="vllm-node", extra="", length="65536", flags="") -> str:
    return RECIPE.format(container=container, extra=extra, length=length, flags=flags)


def plan(text: str, nodes: int = 2, images=("vllm-node",), path: Path | None = None, **asked):
    recipe = parse_recipe(text, "test.yaml", path)
    model = recipe.models[0]
    hosts = [f"spark-{i}" for i in range(nodes)]
    have = [Image(repository=i, tag="latest") for i in images]
    facts = ClusterFacts(
        {h: spark(h, 10 + i, images=have if i == 0 else []) for i, h in enumerate(hosts)}
    )
    choices = DeployChoices(model=model, hosts=hosts, **asked)
    return plan_deployment(facts, choices, Measured(60 * GB, given_recipe=recipe))


def serve_of(deployment: DeploymentPlan) -> str:
    return next(s for s in deployment.steps if s.kind == "serve").actions[0]


def test_the_command_is_filled_with_str_format_so_double_braces_are_literal_braces():
    deployment = plan(recipe_text())
    assert isinstance(deployment, DeploymentPlan), deployment
    serve = serve_of(deployment)
    assert """--speculative-config '{"method":"mtp","num_speculative_tokens":3}'""" in serve
    assert "{{" not in serve and "}}" not in serve


def test_a_flag_with_several_values_keeps_them_all_as_separate_words():
    deployment = plan(recipe_text())
    assert isinstance(deployment, DeploymentPlan), deployment
    assert "--cudagraph-capture-sizes 5 10 15 20" in serve_of(deployment)


def test_a_placeholder_without_a_value_or_a_bad_template_is_refused_with_the_runners_reason():
    with pytest.raises(RecipeError, match="Missing parameter in recipe command"):
        parse_recipe(recipe_text(flags="--seed {seed}"), "x.yaml")
    with pytest.raises(RecipeError, match=r"not a valid str\.format template"):
        parse_recipe(recipe_text(flags="--seed {0}"), "x.yaml")


def test_max_model_len_auto_plans_and_says_scout_sizes_the_context():
    deployment = plan(recipe_text(length="auto"))
    assert isinstance(deployment, DeploymentPlan), deployment
    notes = " ".join(deployment.recipe_notes)
    assert "max_model_len auto" in notes
    assert "--max-model-len auto" not in serve_of(deployment)


def test_the_recipes_topology_and_utilisation_win_and_an_operators_choice_wins_over_them():
    deployment = plan(recipe_text(), nodes=3)
    assert isinstance(deployment, DeploymentPlan), deployment
    assert (deployment.choices.tensor_parallel, len(deployment.choices.hosts)) == (2, 2)
    assert deployment.choices.gpu_memory_utilization == 0.7
    assert any(n.startswith("layout: TP=2 on 2 nodes") for n in deployment.recipe_notes)
    mine = plan(recipe_text(), nodes=3, tensor_parallel=3)
    assert isinstance(mine, DeploymentPlan) and mine.choices.tensor_parallel == 3


def test_a_locally_built_image_is_copied_from_the_head_or_built_there_as_a_gated_job():
    copied = plan(recipe_text())
    assert isinstance(copied, DeploymentPlan), copied
    actions = [a for s in copied.steps for a in s.actions]
    assert not any(a.startswith("docker pull") for a in actions)
    assert any(s.kind == "image-copy" for s in copied.steps)
    missing = plan(recipe_text(container="vllm-node-b12x", extra="build_args: [--exp-b12x]"))
    assert isinstance(missing, DeploymentPlan), missing
    assert not any(f.kind == "image_must_be_built" for f in missing.unresolved)
    build = next(s for s in missing.steps if s.kind == "image-build")
    assert (build.host, build.job) == ("spark-0", "build-image")
    assert build.actions[0].endswith("bash build-and-copy.sh -t vllm-node-b12x --exp-b12x")
    copy = next(s for s in missing.steps if s.id == "image-copy:spark-1")
    assert copy.needs == ["build:spark-0"]
    assert missing.steps.index(build) < missing.steps.index(copy)
    assert not any(a.startswith("docker pull") for s in missing.steps for a in s.actions)


def test_a_solo_only_recipe_runs_on_one_node_and_refuses_a_cluster_asked_for():
    solo = plan(recipe_text(extra="solo_only: true"))
    assert isinstance(solo, DeploymentPlan), solo
    assert (len(solo.choices.hosts), solo.choices.tensor_parallel) == (1, 1)
    refused = plan(recipe_text(extra="solo_only: true"), tensor_parallel=2)
    assert isinstance(refused, PlanRefusal) and "solo_only" in refused.problems[0]


def _repository(tmp_path: Path) -> Path:
    """A checkout's shape around the copied recipes, with mods written for this test: one that
    only copies a chat template into the workspace, one that adds a flag to vLLM."""
    root = tmp_path / "spark-vllm-docker"
    shutil.copytree(RECIPES, root / "recipes")
    (root / "run-recipe.py").write_text("# the runner's place in a checkout\n")
    template = root / "mods" / "fix-qwen3.5-chat-template"
    template.mkdir(parents=True)
    (template / "chat_template.jinja").write_text("{{ messages }}\n")
    (template / "run.sh").write_text(
        "#!/bin/bash\nset -e\ncp chat_template.jinja $WORKSPACE_DIR/unsloth.jinja\necho done\n"
    )
    adds = root / "mods" / "gpu-mem-util-gb"
    adds.mkdir(parents=True)
    (adds / "run.sh").write_text("#!/bin/bash\npython3 -c 'add(\"--gpu-memory-utilization-gb\")'\n")
    return root


def test_check_reads_every_community_recipe_without_the_repository(capsys):
    assert main(["recipes", "check", str(RECIPES)]) == 0
    out = capsys.readouterr().out
    assert "35 of 35 recipe files read" in out
    assert "[warning] mod `mods/fix-qwen3.5-chat-template`: not found" in out
    assert "image vllm-node is built, never pulled" in out


def test_check_reads_every_community_recipe_inside_a_repository_and_applies_a_file_mod(
    tmp_path, capsys
):
    root = _repository(tmp_path)
    assert main(["recipes", "check", str(root)]) == 0
    assert "35 of 35 recipe files read" in capsys.readouterr().out
    recipe = read_recipe_file(root / "recipes" / "qwen3.5-122b-fp8.yaml")
    assert [f.name for f in recipe.workspace_files] == ["unsloth.jinja"]
    assert main(["recipes", "show", "step-3.7-flash-fp8", "--dir", str(root)]) == 0
    shown = capsys.readouterr().out
    assert "--gpu-memory-utilization-gb" not in shown.split("serve on")[1].split("\n")[0]
    assert "added to vLLM by mod `mods/gpu-mem-util-gb`" in shown


def test_a_file_mod_is_written_into_the_container_and_its_flag_kept(tmp_path):
    root = _repository(tmp_path)
    path = root / "recipes" / "qwen3.5-122b-fp8.yaml"
    deployment = plan(path.read_text(), path=path)
    assert isinstance(deployment, DeploymentPlan), deployment
    assert "--chat-template unsloth.jinja" in serve_of(deployment)
    head = next(s for s in deployment.steps if s.id == "container:spark-0")
    assert head.actions[1].startswith("docker exec -i scout-vllm sh -c 'cat > unsloth.jinja'")
    assert "{{ messages }}" in head.actions[1]


def test_check_names_each_file_that_does_not_read_and_exits_1(tmp_path, capsys):
    (tmp_path / "good.yaml").write_text(recipe_text())
    (tmp_path / "bad.yaml").write_text(recipe_text(flags="--seed {seed}"))
    (tmp_path / "typo.yaml").write_text(recipe_text(extra="solo_onyl: true"))
    assert main(["recipes", "check", "-q", str(tmp_path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len([line for line in lines if line.startswith("[error]")]) == 2
    assert any("bad.yaml" in line and "{seed}" in line for line in lines)
    assert any("typo.yaml" in line and "solo_onyl" in line for line in lines)


@pytest.mark.skipif(not CHECKOUT, reason="SCOUT_SPARK_VLLM_DOCKER names no 358bf26 checkout")
def test_check_reads_every_recipe_of_the_real_checkout(capsys):
    assert main(["recipes", "check", "-q", str(CHECKOUT)]) == 0
    assert "35 of 35 recipe files read" in capsys.readouterr().out


@pytest.mark.slow
def test_show_renders_a_recipe_on_the_inventorys_hosts_and_names_an_ambiguous_name(
    tmp_path, capsys
):
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(
        "hosts:\n  spark-a: {address: 10.0.0.10, user: scout}\n"
        "  spark-b: {address: 10.0.0.11, user: scout}\n"
    )
    args = ["recipes", "show", "minimax-m2.5-awq", "--dir", str(RECIPES)]
    assert main([*args, "--inventory", str(inventory)]) == 0
    out = capsys.readouterr().out
    assert "layout: TP=2 on 2 nodes" in out and "nodes spark-a, spark-b" in out
    assert "image: vllm-node (built, never pulled: `./build-and-copy.sh -t vllm-node`)" in out
    serve = next(line for line in out.splitlines() if "serve on spark-a:" in line)
    assert "--tool-call-parser minimax_m2" in serve and "--max-model-len 128000" in serve
    assert main(["recipes", "show", "MiniMax-M2.5", "--dir", str(RECIPES)]) == 1
    err = capsys.readouterr().err
    assert "2 recipes are called MiniMax-M2.5" in err and "bundled/minimax-m2.5" in err
    assert (
        main(["recipes", "show", "deepseek-v4-flash", "--dir", str(RECIPES), "--hosts", "a"]) == 1
    )
    assert "1 host(s) given: give more hosts" in capsys.readouterr().err


def test_list_shows_the_bundled_recipes_and_the_folders(capsys):
    assert main(["recipes", "list", "--dir", str(RECIPES)]) == 0
    out = capsys.readouterr().out
    assert "bundled/qwen3.5-122b-a10b-fp8" in out
    assert "glm-5.2-nvfp4--tp-8  nvidia/GLM-5.2-NVFP4  vllm  2+ nodes  vllm-node-b12x" in out
    assert "gemma4-26b-a4b-nvfp4  nvidia/Gemma-4-26B-A4B-NVFP4  vllm  solo  vllm-node" in out


def test_a_recipe_version_the_runner_does_not_support_or_none_is_read_as_1_and_said():
    newer = parse_recipe(recipe_text().replace('recipe_version: "1"', 'recipe_version: "2"'), "x")
    assert any("`recipe_version` 2" in line and "supports 1" in line for line in newer.not_applied)
    bare = parse_recipe(recipe_text().replace('recipe_version: "1"\n', ""), "x.yaml")
    assert any("`recipe_version` missing" in line for line in bare.not_applied)
    assert not parse_recipe(recipe_text(), "x.yaml").not_applied
