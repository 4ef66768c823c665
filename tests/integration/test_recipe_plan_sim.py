"""An operator's recipe in spark-vllm-docker's format, planned on the simulated seed pair: the
serve command carries its flags with the `{param}`s filled, and the plan names what it cannot
apply (mods, build_args)."""

import pytest

from tests.integration.test_deploy_variants_sim import plan_on
from tests.support.runner_table import RECIPES
from tests.unit.test_recipe_book import COMMUNITY
from tools.recon.probe import probe_hosts

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"


@pytest.mark.slow
async def test_a_community_recipe_is_planned_with_its_flags_filled_and_mods_named(tmp_path):
    path = tmp_path / "qwen3.5-122b-fp8.yaml"
    path.write_text(COMMUNITY, encoding="utf-8")
    plan = {"model": MODEL, "hosts": ["spark-a", "spark-b"], "model_size_gb": 119}
    result = await plan_on("seed-pair", {**plan, "recipe_file": str(path)})
    text = result["content"]
    assert not result.get("is_error"), text[:2000]
    serve = next(line for line in text.splitlines() if "vllm serve" in line and "--port" in line)
    assert "--enable-prefix-caching --max-num-batched-tokens 4096" in serve
    assert "{" not in serve
    assert "-e VLLM_FLASHINFER_MOE_BACKEND=latency" in text
    assert "mod `mods/fix-qwen3.5-chat-template`" in text and "build_args `--pre-tf`" in text
    assert "approve the plan to proceed without them, or stop" in text


@pytest.mark.slow
async def test_the_bundled_recipe_states_the_context_and_where_it_came_from():
    plan = {"model": MODEL, "hosts": ["spark-a", "spark-b"], "model_size_gb": 119}
    result = await plan_on("seed-pair", plan)
    goal = result["content"].split("\n", 1)[0]
    assert "Recipe qwen3.5-122b-a10b-fp8" in goal
    assert "--max-model-len 262144: the recipe's" not in goal  # the model's own length
    assert "--max-model-len 262144: the model's own 262,144 tokens" in goal
    assert "from config.json cached on spark-a" in goal
    assert "Trade-off: one Spark serves the INT4 AutoRound checkpoint" in goal


@pytest.mark.slow
async def test_a_known_bad_image_is_refused_with_its_reason():
    plan = {"model": MODEL, "hosts": ["spark-a", "spark-b"], "model_size_gb": 119}
    result = await plan_on("seed-pair", {**plan, "image": "nvcr.io/nvidia/vllm:26.07-py3"})
    assert result["is_error"]
    assert "known bad" in result["content"] and "HTTP 500" in result["content"]


@pytest.mark.slow
async def test_the_gid_index_is_read_on_each_node_and_nccl_may_not_fall_back():
    plan = {"model": MODEL, "hosts": ["spark-a", "spark-b"], "model_size_gb": 119}
    text = (await plan_on("healthy-pair", plan))["content"]
    runs = [line for line in text.splitlines() if "docker run -d --name scout-vllm" in line]
    assert len(runs) == 2
    for run in runs:
        assert "-e NCCL_IB_GID_INDEX=3" in run and "-e NCCL_NET=IB" in run


@pytest.mark.slow
async def test_a_community_recipe_on_the_head_is_read_there(tmp_path):
    where = "/opt/spark-vllm-docker/recipes/qwen3.5-122b-fp8.yaml"
    lines = "".join(f"        {line}\n" for line in COMMUNITY.splitlines())
    scenario = tmp_path / "seed-pair-with-kit.yaml"
    scenario.write_text(
        "extends: seed-pair\nname: seed-pair-with-kit\ndescription: the seed pair with a "
        "spark-vllm-docker checkout on the head\nhosts:\n  spark-a:\n    files:\n"
        f"      {where}: |\n{lines}",
        encoding="utf-8",
    )
    plan = {"model": MODEL, "hosts": ["spark-a", "spark-b"], "model_size_gb": 119}
    result = await plan_on(str(scenario), {**plan, "recipe_file": f"spark-a:{where}"})
    assert not result.get("is_error"), result["content"][:2000]
    assert f"from spark-a:{where}, as asked" in result["content"]
    missing = await plan_on(str(scenario), {**plan, "recipe_file": "spark-a:/opt/none.yaml"})
    assert missing["is_error"]
    assert "spark-a:/opt/none.yaml: cat: /opt/none.yaml: No such file" in missing["content"]


@pytest.mark.slow
async def test_recon_notices_a_spark_vllm_docker_checkout_and_says_how_to_use_it(
    cluster, pool
) -> None:
    recipes = cluster.host_dir("spark-a") / "home" / "spark-vllm-docker" / "recipes"
    (recipes / "4x-spark-cluster").mkdir(parents=True)
    for name in ("qwen3.5-122b-fp8.yaml", "glm-4.7-flash-awq.yaml", "README.md"):
        (recipes / name).write_text("name: x\n")
    probe_round = await probe_hosts(pool, ["spark-a", "spark-b"])
    head = probe_round.facts["spark-a"].kits
    assert head.spark_vllm_docker is not None
    assert head.spark_vllm_docker.endswith("/spark-vllm-docker/recipes") and head.recipes == 2
    assert probe_round.facts["spark-b"].kits.spark_vllm_docker is None
    assert f"recipe_file=spark-a:{head.spark_vllm_docker}/NAME.yaml" in head.words("spark-a")


@pytest.mark.slow
async def test_the_communitys_own_recipe_plans_with_its_image_copied_from_the_head_not_pulled():
    """spark-vllm-docker's real qwen3.5-122b-fp8 recipe (358bf26) on the seed pair: its image
    vllm-node, which the runner builds and no registry holds, is on the head only."""
    path = RECIPES / "qwen3.5-122b-fp8.yaml"
    plan = {"model": MODEL, "hosts": ["spark-a", "spark-b"], "model_size_gb": 119}
    result = await plan_on("seed-pair", {**plan, "recipe_file": str(path)})
    text = result["content"]
    assert not result.get("is_error"), text[:2000]
    assert "docker pull vllm-node" not in text
    assert "vllm-node:latest (built, never pulled) copied from spark-a" in text
    serve = next(line for line in text.splitlines() if "vllm serve" in line and "--port" in line)
    assert "--tensor-parallel-size 2" in serve and "--gpu-memory-utilization 0.8" in serve
    assert "--chat-template" not in serve  # its mod is not around the copied file
    assert "--chat-template unsloth.jinja (unsloth.jinja is a file" in text
