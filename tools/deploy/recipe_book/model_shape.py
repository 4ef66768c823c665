"""The KV cache's cost of a token, from the model's own config.json.

vLLM keeps K and V for every attention layer that attends over the whole sequence: bytes per
token = 2 × attention layers × KV heads × head dim × bytes per element (vLLM's KV cache spec,
`page_size_bytes`). Hybrid models (Qwen3.5, Qwen3-Next) keep a constant-size state in their
linear-attention layers: only the `full_attention` entries of `layer_types` (or one layer in
`full_attention_interval`) count. Layers that attend over a sliding window (gpt-oss alternates
`sliding_attention` of `sliding_window` 128 tokens with `full_attention`; Gemma, Mistral declare a
window too) keep at most the window's tokens, as vLLM's SlidingWindowSpec sizes them. Multimodal
configs nest the text model under `text_config`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tools.deploy.recipe_book.schema import ModelShape


@dataclass(frozen=True)
class KvShape:
    max_position_embeddings: int
    attention_layers: int
    kv_heads: int
    head_dim: int
    source: str
    sliding_layers: int = 0  # layers that keep only the last `sliding_window` tokens
    sliding_window: int = 0

    def bytes_per_token(self, element_bytes: int = 2) -> int:
        """Per token of the full-attention layers (the windowed ones stop growing)."""
        return 2 * self.attention_layers * self.kv_heads * self.head_dim * element_bytes

    def bytes_for(self, length: int, element_bytes: int = 2) -> int:
        """One sequence of `length` tokens over every layer, windowed layers capped."""
        per_layer_token = 2 * self.kv_heads * self.head_dim * element_bytes
        windowed = self.sliding_layers * min(length, self.sliding_window)
        return per_layer_token * (self.attention_layers * length + windowed)

    def words(self) -> str:
        windowed = (
            f" (+{self.sliding_layers} over a {self.sliding_window}-token window)"
            if self.sliding_layers
            else ""
        )
        return (
            f"{self.attention_layers} attention layers{windowed} × {self.kv_heads} KV heads × "
            f"{self.head_dim} dims, {self.max_position_embeddings:,} positions"
        )


def shape_from_config(config: Any, source: str) -> KvShape | None:
    """The shape from a parsed config.json; None when the numbers are not there."""
    if not isinstance(config, dict):
        return None
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    layers = _int(text.get("num_hidden_layers"))
    heads = _int(text.get("num_attention_heads"))
    kv_heads = _int(text.get("num_key_value_heads")) or heads
    head_dim = _int(text.get("head_dim"))
    if head_dim is None and heads and _int(text.get("hidden_size")):
        head_dim = int(text["hidden_size"]) // heads
    positions = _int(text.get("max_position_embeddings"))
    if None in (layers, kv_heads, head_dim, positions):
        return None
    types = text.get("layer_types")
    interval = _int(text.get("full_attention_interval"))
    # Qwen2/3 declare a window and `use_sliding_window: false`: then no layer is windowed
    window = 0 if text.get("use_sliding_window") is False else _int(text.get("sliding_window"))
    window = window or 0
    sliding = 0
    if isinstance(types, list) and types:
        attention = sum(1 for t in types if t == "full_attention")
        sliding = sum(1 for t in types if t == "sliding_attention") if window else 0
        attention += 0 if window else sum(1 for t in types if t == "sliding_attention")
    elif interval:
        attention = layers // interval
    elif window and window < (positions or 0):  # every layer windowed (Mistral 7B v0.1)
        attention, sliding = 0, layers
    else:
        attention = layers
    shape = (positions, attention, kv_heads, head_dim, source, sliding, window)
    return KvShape(*shape)  # type: ignore[arg-type]


def shape_from_recipe(shape: ModelShape, recipe: str) -> KvShape:
    return KvShape(
        shape.max_position_embeddings,
        shape.full_attention_layers
        if shape.full_attention_layers is not None
        else shape.num_hidden_layers,
        shape.num_key_value_heads,
        shape.head_dim,
        f"recipe {recipe}: {shape.source}",
    )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
