"""Every recipe of spark-vllm-docker at 358bf26, read and planned as its own runner runs it.

The recipes are a copy of the community repository's `recipes/` folder (public data, in
tests/fixtures/recipes/spark-vllm-docker-358bf26). What the runner renders for each is its own
`run-recipe.py --dry-run`, kept in spark-vllm-docker-358bf26-runner.json (tests/support/
runner_table.py); with `SCOUT_SPARK_VLLM_DOCKER` naming a checkout at 358bf26 the file is checked
against the runner itself. Scout's side is a plan on simulated Sparks of the recipe's size.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest
import yaml

from tests.support.runner_table import RECIPES, TABLE, recipe_files, runner_rendering
from tests.support.sparks import spark
from tools.checks import GB
from tools.deploy.choices import DeployChoices
from tools.deploy.plan.planner import ClusterFacts, DeploymentPlan, Measured, plan_deployment
from tools.deploy.recipe_book.load import read_recipe_file
from tools.deploy.recipe_book.runner_template import canonical
from tools.world.facts import Image

CHECKOUT = os.environ.get("SCOUT_SPARK_VLLM_DOCKER")
RUNNER = json.loads(TABLE.read_text(encoding="utf-8"))
# The one way Scout's launch differs from the runner's by design: it runs vLLM over Ray on
# every node count; the runner's launch-cluster.sh runs without Ray unless `--ray` is given.
RAY = "--distributed-executor-backend"
RAY_WHY = "Scout's launch runs vLLM over Ray; the runner's default is no Ray"
SIZES = {"--tensor-parallel-size": "1", "--pipeline-parallel-size": "1"}


def test_the_copy_holds_every_recipe_of_the_runner_table():
    assert len(recipe_files()) == 35
    assert sorted(RUNNER) == recipe_files()


@pytest.mark.skipif(not CHECKOUT, reason="SCOUT_SPARK_VLLM_DOCKER names no 358bf26 checkout")
def test_the_runner_table_is_what_the_runner_renders():
    checkout = Path(CHECKOUT or ".")
    for name in recipe_files():
        assert runner_rendering(checkout, name) == RUNNER[name], name


def _flags(words: list[str]) -> dict[str, str]:
    """Canonical flag → its values (the last occurrence wins, as in vLLM's parser)."""
    found: dict[str, str] = dict(SIZES)
    current = None
    for word in words:
        if word.startswith("-") and not word[1:2].isdigit():
            name, eq, value = word.partition("=")
            current = canonical(name)
            found[current] = value if eq else ""
        elif current is not None:
            found[current] = f"{found[current]} {word}".strip()
    return found


def _scout(name: str, folder: Path = RECIPES) -> tuple[dict, DeploymentPlan]:
    recipe = read_recipe_file(folder / name)
    runner = RUNNER[name]
    hosts = [f"spark-{i}" for i in range(runner["nodes"])]
    image = Image(repository=runner["image"], tag="latest")
    facts = ClusterFacts({h: spark(h, 10 + i, images=[image]) for i, h in enumerate(hosts)})
    choices = DeployChoices(model=recipe.models[0], hosts=hosts)
    measured = Measured(model_size_bytes=runner["nodes"] * 30 * GB, given_recipe=recipe)
    plan = plan_deployment(facts, choices, measured)
    assert isinstance(plan, DeploymentPlan), (name, plan)
    serve = next(s for s in plan.steps if s.kind == "serve").actions[0]
    run = next(s for s in plan.steps if s.id == f"container:{hosts[0]}").actions[0]
    words = shlex.split(run)
    env = dict(w.partition("=")[::2] for i, w in enumerate(words) if words[i - 1] == "-e")
    return {
        "image": plan.choices.image,
        "nodes": len(plan.choices.hosts),
        "env": env,
        "command": shlex.split(serve)[3:],  # less `docker exec CONTAINER`
    }, plan


def compare(name: str, folder: Path = RECIPES) -> list[tuple[str, str]]:
    """(what differs, the reason Scout names) for one recipe read from `folder`; the reason is
    "" where Scout names none."""
    runner = RUNNER[name]
    scout, plan = _scout(name, folder)
    notes = " ".join(plan.recipe_notes)
    out: list[tuple[str, str]] = []
    for key in ("image", "nodes"):
        if scout[key] != runner[key]:
            out.append((f"{key} {runner[key]} → {scout[key]}", ""))
    data = yaml.safe_load((RECIPES / name).read_text(encoding="utf-8"))
    for var, value in runner["env"].items():
        written = str((data.get("env") or {})[var])
        if scout["env"].get(var) != value:
            why = "the runner's `export K=\"…\"` strips the value's own quotes; Scout passes it"
            out.append((f"env {var}", why if scout["env"].get(var) == written else ""))
    theirs, ours = _flags(runner["command"][3:]), _flags(scout["command"][2:])
    for flag in sorted(set(theirs) | set(ours)):
        if theirs.get(flag) == ours.get(flag):
            continue
        if flag == RAY and flag not in theirs:
            out.append((f"{flag} {ours[flag]}", RAY_WHY))
            continue
        shown = f"{flag} {theirs.get(flag, '(absent)')} → {ours.get(flag, '(absent)')}"
        if flag not in ours:
            left = f"{flag} {theirs[flag]}".strip()
            out.append((shown, "left out, as the plan says" if left in notes else ""))
        elif flag not in theirs:
            said = f"{flag} {ours[flag]}" in notes
            out.append((shown, "the recipe leaves it to vLLM; Scout sizes it, as the plan says"))
            out[-1] = out[-1] if said else (shown, "")
        elif flag == "--max-model-len" and theirs.get(flag) == "auto":
            out.append((shown, "max_model_len auto: Scout states the length it sizes"))
        else:
            out.append((shown, ""))
    return out


def _table(folder: Path) -> list[str]:
    """One row per recipe (same, or what differs and why); AssertionError on a difference
    Scout does not name."""
    rows, unexplained = [], []
    for name in recipe_files():
        diffs = compare(name, folder)
        unexplained += [f"{name}: {what}" for what, why in diffs if not why]
        named = [f"{what} ({why})" for what, why in diffs if why != RAY_WHY]
        rows.append(f"{name}: " + ("differs: " + "; ".join(named) if named else "same"))
        mods = read_recipe_file(folder / name).not_applied
        rows[-1] += f" [not applied: {len(mods)} mod(s), said in the plan]" if mods else ""
    print("\n".join(["", f"{folder} (all: {RAY_WHY})", *rows]))
    assert unexplained == []
    return rows


@pytest.mark.slow
def test_every_recipe_renders_as_the_runner_renders_it_or_scout_names_why():
    rows = _table(RECIPES)
    assert sum(": same" in row for row in rows) >= 20


@pytest.mark.skipif(not CHECKOUT, reason="SCOUT_SPARK_VLLM_DOCKER names no 358bf26 checkout")
def test_inside_the_checkout_file_mods_are_applied_and_their_flags_kept():
    rows = _table(Path(CHECKOUT or ".") / "recipes")
    assert "qwen3.5-122b-fp8.yaml: same" in rows  # its chat-template mod is applied


def test_the_minimax_four_spark_recipe_plans_tp4_on_four_nodes_and_says_scouts_own_choice():
    scout, plan = _scout("4x-spark-cluster/minimax-m2.5.yaml")
    assert (plan.choices.tensor_parallel, plan.choices.pipeline_parallel) == (4, 1)
    assert scout["nodes"] == 4
    line = next(n for n in plan.recipe_notes if n.startswith("layout: TP=4 on 4 nodes"))
    assert "wins over Scout's chooser" in line and "Scout's chooser: TP=2 on 2 nodes" in line


def test_the_bundled_minimax_recipe_on_four_sparks_is_tp4_where_the_chooser_took_three_nodes():
    hosts = [f"spark-{i}" for i in range(4)]
    facts = ClusterFacts({h: spark(h, 10 + i) for i, h in enumerate(hosts)})
    choices = DeployChoices(model="MiniMaxAI/MiniMax-M2.5", hosts=hosts)
    plan = plan_deployment(facts, choices, Measured(model_size_bytes=230 * GB))
    assert isinstance(plan, DeploymentPlan), plan
    assert (plan.choices.tensor_parallel, plan.choices.pipeline_parallel) == (4, 1)
    assert plan.choices.hosts == hosts
    line = next(n for n in plan.recipe_notes if n.startswith("layout: TP=4 on 4 nodes"))
    assert "NVIDIA through-switch example" in line
    assert "Scout's chooser: TP=1 × PP=3 on 3 nodes" in line


def test_the_qwen397b_int4_four_spark_recipe_plans_at_its_own_utilisation():
    _, plan = _scout("4x-spark-cluster/qwen3.5-397b-int4-autoround.yaml")
    assert plan.choices.gpu_memory_utilization == 0.78
    assert "gpu_memory_utilization 0.78" in " ".join(plan.recipe_notes)
