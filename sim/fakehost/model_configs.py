"""The config.json a model's Hub repository holds, for the models the scenarios serve: the fields
that size the KV cache, nested as the model's own file nests them.

Qwen3.5-122B-A10B(-FP8): a multimodal checkpoint whose text model sits under `text_config`
(`model_type` qwen3_5_moe / qwen3_5_moe_text), 48 layers of which one in four is full attention
(`full_attention_interval: 4`), 2 KV heads of 256 dims, 262,144 positions (docs/sources.md
§7; the Qwen3.5 MoE config layout in public configs and vLLM's qwen3_5 config class).
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

CONFIGS: dict[str, dict[str, Any]] = {
    "Qwen/Qwen3.5-122B-A10B-FP8": _QWEN35_122B,
    "Qwen/Qwen3.5-122B-A10B": _QWEN35_122B,
}
