"""With no recipe, vLLM's parsers and the native context come from the model's own config files
and vLLM's parser table (docs/features/tool_calling.md, vllm/reasoning and vllm/tool_parsers
registries), never from a guess."""

from __future__ import annotations

import shlex

from sim.fakehost.model_configs import CONFIGS
from tests.support.sparks import spark
from tools.checks import GB
from tools.deploy.choices import DeployChoices
from tools.deploy.plan.planner import ClusterFacts, DeploymentPlan, Measured, plan_deployment
from tools.deploy.recipe_book.model_parsers import parsers_from_config
from tools.deploy.recipe_book.model_shape import shape_from_config

GPT_OSS = "openai/gpt-oss-120b"
LLAMA_FP8 = "nvidia/Llama-3.3-70B-Instruct-FP8"
WHERE = "config.json cached on spark-0"


def _serve(model: str, nodes: int, size_gb: float, with_config: bool = True) -> tuple:
    hosts = [f"spark-{i}" for i in range(nodes)]
    facts = ClusterFacts({h: spark(h, 10 + i) for i, h in enumerate(hosts)})
    config = CONFIGS[model]
    measured = Measured(
        model_size_bytes=round(size_gb * GB),
        config_shape=shape_from_config(config, WHERE) if with_config else None,
        parsers=(parsers_from_config(config), WHERE) if with_config else None,
    )
    plan = plan_deployment(facts, DeployChoices(model=model, hosts=hosts), measured)
    assert isinstance(plan, DeploymentPlan), plan
    serve = next(s for s in plan.steps if s.kind == "serve").actions[0]
    words = shlex.split(serve)
    flags = {w: words[i + 1] for i, w in enumerate(words[:-1]) if w.startswith("--")}
    return flags, words, plan


def test_gpt_oss_120b_on_one_spark_gets_the_openai_parsers_and_its_native_context() -> None:
    flags, words, plan = _serve(GPT_OSS, 1, 65.3)

    assert flags["--tool-call-parser"] == "openai"
    assert flags["--reasoning-parser"] == "openai_gptoss"
    assert "--enable-auto-tool-choice" in words
    assert flags["--max-model-len"] == "131072"  # max_position_embeddings, not a 16k guess
    notes = " ".join(plan.recipe_notes)
    assert "tool-call parser openai and reasoning parser openai_gptoss: model_type gpt_oss" in notes
    assert "the model's own 131,072" in notes and "18 over a 128-token window" in notes


def test_a_llama_fp8_id_gets_llama3_json_from_its_config() -> None:
    flags, words, _ = _serve(LLAMA_FP8, 2, 72)

    assert flags["--tool-call-parser"] == "llama3_json"
    assert "--reasoning-parser" not in flags and "--enable-auto-tool-choice" in words


def test_without_the_model_config_no_parser_is_guessed() -> None:
    flags, _, _ = _serve(GPT_OSS, 1, 65.3, with_config=False)

    assert "--tool-call-parser" not in flags and "--reasoning-parser" not in flags


def test_llama_without_tool_calls_and_unknown_families_get_no_parser_and_say_so() -> None:
    llama2 = {"model_type": "llama", "vocab_size": 32000, "max_position_embeddings": 4096}
    found = parsers_from_config(llama2)
    assert found is not None and found.flags() == []
    assert "not in vLLM's parser table" in found.line("the Hub")
    assert parsers_from_config({"model_type": "phi3"}).flags() == []  # type: ignore[union-attr]
    assert parsers_from_config({"architectures": ["X"]}) is None


def test_llama_31_tool_calls_are_read_from_generation_config_end_tokens() -> None:
    config = {"model_type": "llama", "vocab_size": 128256}
    found = parsers_from_config(config, {"eos_token_id": [128001, 128008, 128009]})
    assert found is not None and found.tool == "llama3_json"
    assert parsers_from_config(config, {"eos_token_id": [128001, 128009]}).tool is None  # type: ignore[union-attr]


def test_a_multimodal_config_is_read_through_its_text_config() -> None:
    config = {"model_type": "wrapper_vl", "text_config": {"model_type": "qwen3_moe"}}
    found = parsers_from_config(config)
    assert found is not None and (found.tool, found.reasoning) == ("hermes", "qwen3")


def test_gpt_oss_kv_counts_windowed_layers_at_their_window() -> None:
    shape = shape_from_config(CONFIGS[GPT_OSS], "config.json")
    assert shape is not None
    assert (shape.attention_layers, shape.sliding_layers, shape.sliding_window) == (18, 18, 128)
    per_layer_token = 2 * 8 * 64 * 2
    assert shape.bytes_for(131072) == per_layer_token * (18 * 131072 + 18 * 128)
    qwen2 = {
        "num_hidden_layers": 28,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "max_position_embeddings": 32768,
        "sliding_window": 4096,
        "use_sliding_window": False,
    }
    assert shape_from_config(qwen2, "c").sliding_layers == 0  # type: ignore[union-attr]
