"""The engine's memory settings when nobody chose them: `--gpu-memory-utilization` from what CUDA
can give on every node, `--max-model-len` from what is left there for the KV cache.

Why a default at all: Qwen3.5's native context is 262,144 tokens (reference/dgx-spark.md §7);
vLLM sizes the KV cache for the model's own length unless told otherwise and refuses to start
when one sequence of that length does not fit. NVIDIA's two-Spark examples always pass both
flags (`--max-model-len 2048 --gpu-memory-utilization 0.8`, §2.3).

The KV cost of a token is not known before the model's config is read, so the length is chosen
for an assumed cost, stated in the plan: a dense model with grouped-query attention of the
70B class (80 layers × K and V × 8 KV heads × 128 dims × 2 bytes = 320 KiB a token, half of it
per node at TP=2). Hybrid models such as Qwen3.5 (a full-attention layer in four) need far
less, so the choice errs short; pass max_model_len to go longer.
"""

from __future__ import annotations

from collections.abc import Sequence

from tools.checks.budget import NodeBudget, default_utilization
from tools.checks.finding import gb

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


def choose_max_model_len(
    kv_left_bytes: float, nodes: int, chosen: int | None
) -> tuple[int | None, str]:
    """The user's length, else the longest of LENGTHS whose KV for SEQUENCES sequences fits."""
    if chosen is not None:
        return chosen, f"--max-model-len {chosen} (as asked)"
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
