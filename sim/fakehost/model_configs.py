"""The config.json a model's Hub repository holds, for the models the scenarios serve: the fields
that size the KV cache, nested as the model's own file nests them.

Qwen3.5-122B-A10B(-FP8): a multimodal checkpoint whose text model sits under `text_config`
(`model_type` qwen3_5_moe / qwen3_5_moe_text), 48 layers of which one in four is full attention
(`full_attention_interval: 4`), 2 KV heads of 256 dims, 262,144 positions (docs/sources.md
§7; the Qwen3.5 MoE config layout in public configs and vLLM's qwen3_5 config class).
gpt-oss-120b and a Llama 3.3 FP8 checkpoint: models no bundled recipe covers, whose parsers and
context the planner reads from these files.
"""

from __future__ import annotations

from typing import Any

_QWEN35_122B: dict[str, Any] = {
    "architectures": ["Qwen3_5MoeForConditionalGeneration"],
    "model_type": "qwen3_5_moe",
    "text_config": {
        "model_type": "qwen3_5_moe_text",
        "num_hidden_layers": 48,
        "full_attention_interval": 4,
        "num_attention_heads": 32,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "max_position_embeddings": 262144,
        "num_experts": 256,
        "num_experts_per_tok": 8,
    },
}

# openai/gpt-oss-120b's config.json (huggingface.co/openai/gpt-oss-120b): 36 layers alternating
# a 128-token sliding window with full attention, 8 KV heads of 64 dims, 131,072 positions
_GPT_OSS_120B: dict[str, Any] = {
    "architectures": ["GptOssForCausalLM"],
    "model_type": "gpt_oss",
    "num_hidden_layers": 36,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "hidden_size": 2880,
    "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"] * 18,
    "max_position_embeddings": 131072,
    "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096},
    "num_local_experts": 128,
    "experts_per_token": 4,
    "vocab_size": 201088,
    "quantization_config": {"quant_method": "mxfp4"},
}
# Llama 3.3 70B's config.json (as meta-llama/Llama-3.3-70B-Instruct and its FP8 checkpoints
# publish it): 80 layers, 8 KV heads of 128 dims, rope scaling `llama3`, 131,072 positions
_LLAMA33_70B: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "num_hidden_layers": 80,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "hidden_size": 8192,
    "max_position_embeddings": 131072,
    "rope_scaling": {
        "rope_type": "llama3",
        "factor": 8.0,
        "original_max_position_embeddings": 8192,
    },
    "vocab_size": 128256,
}

CONFIGS: dict[str, dict[str, Any]] = {
    "Qwen/Qwen3.5-122B-A10B-FP8": _QWEN35_122B,
    "Qwen/Qwen3.5-122B-A10B": _QWEN35_122B,
    "openai/gpt-oss-120b": _GPT_OSS_120B,
    "nvidia/Llama-3.3-70B-Instruct-FP8": _LLAMA33_70B,
}
