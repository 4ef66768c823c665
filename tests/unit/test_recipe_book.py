"""Recipes as data: the bundled library, operator files in Scout's and the community's format,
the version filter, the model's KV shape and the generated flags document."""

from pathlib import Path

import pytest

from tools.deploy.launch.engine_settings import choose_max_model_len
from tools.deploy.recipe_book.choose import apply_recipe, choose_recipe, refused_image
from tools.deploy.recipe_book.docs import render
from tools.deploy.recipe_book.engines import engine_book
from tools.deploy.recipe_book.load import RecipeError, bundled_recipes, parse_recipe
from tools.deploy.recipe_book.model_shape import shape_from_config

ROOT = Path(__file__).resolve().parents[2]
SEED = "Qwen/Qwen3.5-122B-A10B-FP8"


def test_every_bundled_recipe_loads_and_every_line_has_a_source():
    recipes = {r.name: r for r in bundled_recipes()}
    assert {"qwen3.5-122b-a10b-fp8", "llama-3.3-70b-instruct", "minimax-m2.5"} <= set(recipes)
    assert {r.engine for r in recipes.values()} == {"vllm", "sglang"}
    for recipe in recipes.values():
        lines = [*recipe.flags, *recipe.env, *recipe.known_bad_images, recipe.image]
        lines += [d for _, d in recipe.defaults if d is not None]
        assert recipe.flags, recipe.name
        for line in lines:
            assert line is not None and len(line.source.strip()) >= 3, (recipe.name, line)
    book = engine_book()
    for launch in book.launches.values():
        for line in [launch.image, *launch.flags, *launch.env]:
            assert line.source.strip()


def test_a_flag_without_a_source_is_refused_with_where():
    text = "name: x\nmodels: [a/b]\nengine: vllm\nlaunch: vllm-ray\nflags:\n  - flag: --foo\n"
    with pytest.raises(RecipeError, match=r"^op.yaml: flags\.0\.source: Field required"):
        parse_recipe(text, "op.yaml")


def test_playbook_flags_doc_is_generated_from_the_recipes():
    current = (ROOT / "docs" / "playbook-flags.md").read_text(encoding="utf-8")
    assert current == render(), "stale: run python -m tools.deploy.recipe_book --write-docs"
    assert "`--tool-call-parser qwen3_coder`" in current


def test_the_seed_model_gets_its_recipe_and_the_current_flags():
    recipe, why = choose_recipe(SEED, "vllm-multinode", ["NVIDIA GB10", "NVIDIA GB10"])
    assert recipe is not None and recipe.name == "qwen3.5-122b-a10b-fp8"
    assert "GB10" in why
    applied = apply_recipe(recipe, why, "vllm-multinode", "0.19.1+nv26.05", "probe", {})
    assert applied.flags == [
        "--enable-prefix-caching",
        "--enable-auto-tool-choice",
        "--tool-call-parser qwen3_coder",
        "--reasoning-parser qwen3",
        "--load-format fastsafetensors",
        "--max-num-batched-tokens 8192",
        "--kv-cache-dtype fp8",
    ]
    assert any("chat-template" in n and "not applied" in n for n in applied.notes)


def test_a_flag_the_engine_version_lacks_is_left_out_and_said():
    recipe, why = choose_recipe(SEED, "vllm-ray", [])
    applied = apply_recipe(recipe, why, "vllm-ray", "0.9.2", "the image probe", {})
    assert "--tool-call-parser qwen3_coder" not in applied.flags
    assert "--reasoning-parser qwen3" in applied.flags
    assert "--tool-call-parser (needs 0.10.0)" in applied.notes[-2]


def test_an_unknown_engine_version_keeps_every_flag_and_says_so():
    recipe, why = choose_recipe(SEED, "vllm-ray", [])
    applied = apply_recipe(recipe, why, "vllm-ray", None, "my/image:1 not probed yet", {})
    assert "--tool-call-parser qwen3_coder" in applied.flags
    assert "vllm version unknown (my/image:1 not probed yet)" in applied.notes[1]


def test_no_recipe_on_other_hardware_or_for_an_unknown_model():
    assert choose_recipe(SEED, "vllm-ray", ["NVIDIA H100 80GB HBM3"])[0] is None
    assert choose_recipe("org/unknown", "vllm-ray", [])[0] is None
    assert choose_recipe(SEED, "sglang", [])[0] is None  # the seed recipe is vLLM's


def test_known_bad_images_are_refused_with_their_reason():
    bad = refused_image("nvcr.io/nvidia/vllm:26.07-py3", None)
    assert bad is not None and "HTTP 500" in bad.why and "xgrammar 0.2.0" in bad.why
    assert refused_image("nvcr.io/nvidia/vllm:26.05-py3", None) is None


COMMUNITY = """\
recipe_version: "1"
name: Qwen3.5 122B FP8 (test)
description: written from spark-vllm-docker's recipes/README.md "Recipe Format"
model: Qwen/Qwen3.5-122B-A10B-FP8
container: nvcr.io/nvidia/vllm:26.05-py3
cluster_only: true
build_args:
  - --pre-tf
mods:
  - mods/fix-qwen3.5-chat-template
defaults:
  port: 8000
  host: 0.0.0.0
  tensor_parallel: 2
  gpu_memory_utilization: 0.7
  max_model_len: 262144
  max_num_batched_tokens: 4096
env:
  VLLM_FLASHINFER_MOE_BACKEND: latency
command: |
  vllm serve Qwen/Qwen3.5-122B-A10B-FP8 \\
      --max-model-len {max_model_len} \\
      --gpu-memory-utilization {gpu_memory_utilization} \\
      --port {port} --host {host} \\
      --enable-prefix-caching \\
      --max-num-batched-tokens {max_num_batched_tokens} \\
      -tp {tensor_parallel} --distributed-executor-backend ray
"""


def test_a_community_recipe_reads_into_flags_params_and_what_is_not_applied():
    recipe = parse_recipe(COMMUNITY, "qwen-test.yaml")
    assert recipe.engine == "vllm" and recipe.models == [SEED] and recipe.min_nodes == 2
    assert [f.text() for f in recipe.flags] == [
        "--enable-prefix-caching",
        "--max-num-batched-tokens 4096",  # filled as the runner fills it, from `defaults`
    ]
    assert recipe.image is not None and recipe.image.ref == "nvcr.io/nvidia/vllm:26.05-py3"
    assert len(recipe.not_applied) == 2
    applied = apply_recipe(recipe, "asked", "vllm-ray", None, "unknown", {})
    assert applied.flags[-1] == "--max-num-batched-tokens 4096"
    assert applied.env == {"VLLM_FLASHINFER_MOE_BACKEND": "latency"}


def test_a_community_recipe_with_an_unknown_key_or_no_command_model_is_refused():
    with pytest.raises(RecipeError, match="unknown key"):
        parse_recipe(COMMUNITY + "extra: 1\n", "x.yaml")
    with pytest.raises(RecipeError, match="neither `vllm serve`"):
        parse_recipe("name: a\ncontainer: b\ncommand: python run.py\n", "x.yaml")


QWEN35_CONFIG = {
    "model_type": "qwen3_5_moe",
    "text_config": {
        "num_hidden_layers": 8,
        "layer_types": ["linear_attention"] * 3
        + ["full_attention"]
        + ["linear_attention"] * 3
        + ["full_attention"],
        "num_attention_heads": 32,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "max_position_embeddings": 262144,
    },
}


def test_the_kv_shape_counts_only_full_attention_layers_of_a_hybrid_model():
    shape = shape_from_config(QWEN35_CONFIG, "config.json")
    assert shape is not None and shape.attention_layers == 2
    assert shape.bytes_per_token() == 2 * 2 * 2 * 256 * 2
    dense = {
        "num_hidden_layers": 80,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "hidden_size": 8192,
        "max_position_embeddings": 131072,
    }
    assert shape_from_config(dense, "c").bytes_per_token() == 320 * 1024
    assert shape_from_config({"num_hidden_layers": 2}, "c") is None


def test_the_context_is_the_models_own_when_the_kv_budget_holds_it_and_says_where_from():
    shape = shape_from_config(QWEN35_CONFIG, "config.json cached on spark-a")
    length, why = choose_max_model_len(30e9, 2, None, shape, 262144, 1)
    assert length == 262144
    assert "config.json cached on spark-a" in why
    short, _ = choose_max_model_len(1e9, 2, None, shape, None, 2)
    assert short < 262144
