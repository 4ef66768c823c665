"""A real sparkrun registry's recipe planned on the simulated fresh pair: run as sparkrun runs
it (said, with how spark-vllm-docker would differ), and the image sparkrun builds (the eugr
nightly at :latest, built as sparkrun-eugr-vllm) built on the head as a gated job of the plan,
ahead of everything that uses it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.integration.test_deploy_variants_sim import plan_on

REGISTRY = Path(__file__).parents[1] / "fixtures" / "recipes" / "sparkrun-recipe-registry-3075780"
RECIPE = Path("official-recipes/qwen3.6/vllm/qwen3.6-27b-fp8-mtp-vllm.yaml")


@pytest.mark.slow
async def test_a_sparkrun_recipe_plans_as_sparkrun_with_its_image_built_as_a_job(tmp_path):
    registry = Path(shutil.copytree(REGISTRY, tmp_path / "registry"))
    plan = {"model": "Qwen/Qwen3.6-27B-FP8", "hosts": ["spark-a", "spark-b"]}
    plan |= {"model_size_gb": 30, "recipe_file": str(registry / RECIPE)}

    result = await plan_on("fresh-pair", plan)

    text = result["content"]
    assert not result.get("is_error"), text[:2000]
    assert "Run as sparkrun runs it (registry `official` declared by" in text
    assert "Under spark-vllm-docker: refused (unknown key(s) metadata, runtime" in text
    steps = [m[1] for line in text.splitlines() if (m := re.match(r"^\d+\. (.*)", line))]
    build = next(i for i, step in enumerate(steps) if step.startswith("build "))
    assert (
        "sparkrun-eugr-vllm:latest on spark-a" in steps[build] and "job build-image" in steps[build]
    )
    assert "bash build-and-copy.sh -t sparkrun-eugr-vllm --cleanup" in text
    uses = [i for i, step in enumerate(steps) if "sparkrun-eugr-vllm" in step and i != build]
    assert uses and min(uses) > build
    assert "docker pull" not in text
