"""The engine's memory settings when nobody chose them: `--gpu-memory-utilization` from what CUDA
can give on every node, `--max-model-len` from what is left there for the KV cache.

Why a default at all: Qwen3.5's native context is 262,144 tokens (docs/sources.md §7);
vLLM sizes the KV cache for the model's own length unless told otherwise and refuses to start
when one sequence of that length does not fit. NVIDIA's two-Spark examples always pass both
flags (`--max-model-len 2048 --gpu-memory-utilization 0.8`, §2.3).

The KV cost of a token comes from the model's own config.json (recipe_book/model_shape.py: a
host's cached snapshot, the Hub, or the shape a recipe recorded), and the longest length up to
the model's own (or the recipe's) that fits is chosen. Only when no config could be read is the
cost assumed, and the plan says so: a dense model with grouped-query attention of the 70B class
(80 layers × K and V × 8 KV heads × 128 dims × 2 bytes = 320 KiB a token).
"""

from __future__ import annotations

from collections.abc import Sequence

from tools.checks.budget import NodeBudget, default_utilization
from tools.deploy.recipe_book.model_shape import KvShape
from tools.world.findings import gb

KV_BYTES_PER_TOKEN = 320 * 1024  # the assumed cost over the whole model (see above)
SEQUENCES = 4  # full-length sequences the KV cache should hold at once
LENGTHS = (262144, 131072, 65536, 32768, 16384, 8192, 4096, 2048)


def choose_utilization(budgets: Sequence[NodeBudget], chosen: float | None) -> tuple[float, str]:
    """The user's fraction, else the most every node's CUDA can give (at most 0.8)."""
    if chosen is not None:
        return chosen, f"--gpu-memory-utilization {chosen:g} (as asked)"
    value = default_utilization(budgets)
    ceilings = [u for b in budgets if (u := b.max_utilization(freed=True)) is not None]
    if not ceilings:
        return value, f"--gpu-memory-utilization {value:g} (the engines' usual fraction)"
    return value, (
        f"--gpu-memory-utilization {value:g}: CUDA can allocate at most "
        f"{min(ceilings):.2f} of the unified memory on every node (about 102 of 121.69 GiB on "
        "a GB10), so the engine's start check passes"
    )


def context_kv(length: int, shape: KvShape, element_bytes: int = 2) -> float:
    """The KV cache of one sequence of `length` tokens over the whole model, from its shape."""
    return float(shape.bytes_for(length, element_bytes))


def choose_max_model_len(
    kv_left_bytes: float,
    nodes: int,
    chosen: int | None,
    shape: KvShape | None = None,
    target: int | None = None,
    element_bytes: int = 2,
) -> tuple[int | None, str]:
    """The user's length, else the longest up to the model's own (or `target`, the recipe's)
    whose KV for SEQUENCES sequences fits; without the model's shape, of LENGTHS at an assumed
    cost."""
    if chosen is not None:
        return chosen, f"--max-model-len {chosen} (as asked)"
    if shape is not None:
        return _from_shape(kv_left_bytes, nodes, shape, target, element_bytes)
    per_node = KV_BYTES_PER_TOKEN / max(nodes, 1)
    for length in LENGTHS:
        if length * per_node * SEQUENCES <= kv_left_bytes:
            return length, (
                f"--max-model-len {length}: {gb(kv_left_bytes)} per node left for the KV cache "
                f"holds {SEQUENCES} sequences of {length} tokens at an assumed "
                f"{KV_BYTES_PER_TOKEN // 1024} KiB a token (a dense 70B-class model; the "
                "model's own config may allow longer)"
            )
    return LENGTHS[-1], (
        f"--max-model-len {LENGTHS[-1]}: only {gb(kv_left_bytes)} per node is left for the KV "
        "cache; expect few concurrent requests"
    )


def _from_shape(
    kv_left_bytes: float, nodes: int, shape: KvShape, target: int | None, element_bytes: int
) -> tuple[int, str]:
    top = min(target or shape.max_position_embeddings, shape.max_position_embeddings)
    per_token = shape.bytes_per_token(element_bytes)
    kind = "fp8" if element_bytes == 1 else "16-bit"
    cost = f"{per_token / 1024:g} KiB a token in {kind} KV ({shape.words()}; from {shape.source})"
    aim = (
        f"the recipe's {target:,}"
        if target and target < shape.max_position_embeddings
        else (f"the model's own {shape.max_position_embeddings:,}")
    )
    for length in [top, *(n for n in LENGTHS if n < top)]:
        if shape.bytes_for(length, element_bytes) / max(nodes, 1) * SEQUENCES <= kv_left_bytes:
            return length, (
                f"--max-model-len {length}: {aim} tokens at {cost}; {gb(kv_left_bytes)} per "
                f"node left for the KV cache holds {SEQUENCES} sequences of {length} tokens"
            )
    return LENGTHS[-1], (
        f"--max-model-len {LENGTHS[-1]}: only {gb(kv_left_bytes)} per node is left for the KV "
        f"cache at {cost}; expect few concurrent requests"
    )
