"""The single-stream ceiling: decode cannot beat memory bandwidth over the bytes read per token.

Each generated token reads every active weight once; with tensor parallelism each node reads its
share at its own memory bandwidth. So one stream's rate is at most bandwidth per node × nodes ÷
(active parameters × bytes per parameter for the served dtype). A figure above it is a
measurement error; one far below it a misconfiguration (sockets instead of RDMA, the wrong
attention backend), as community result sets (inference-atlas) reject and flag them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# GB/s per GPU, from each vendor's datasheet; the longest matching name wins
BANDWIDTH_GB_S = {
    "GB10": 273.0,  # DGX Spark, LPDDR5x
    "H100 PCIe": 2000.0,
    "H100 NVL": 3900.0,
    "H100": 3350.0,  # SXM
    "H200": 4800.0,
    "GH200": 4000.0,
    "B200": 8000.0,
    "A100-SXM4-80GB": 2039.0,
    "A100 80GB PCIe": 1935.0,
    "A100": 1555.0,  # 40GB
    "L40S": 864.0,
    "RTX 5090": 1792.0,
    "RTX 4090": 1008.0,
}
# the precision a checkpoint's name states, what it is in words, and a weight's bytes
BYTES_PER_PARAM = (
    (r"NVFP4|MXFP4|FP4", "4-bit float", 0.5),
    (r"AWQ|GPTQ|INT4|W4A16|4bit|AutoRound", "4-bit integer", 0.5),
    (r"FP8|INT8|W8A8|8bit", "8-bit", 1.0),
    (r"BF16|FP16", "16-bit", 2.0),
)
# mixture-of-experts families whose names do not give the active parameters: a dense guess from
# the total would put the ceiling far too low and flag an honest figure
MOE_UNNAMED = r"gpt-oss|deepseek-(v[23]|r1)|mixtral|\d+x\d+(\.\d+)?b|moe|kimi-k2|glm-4\.5"
FAR_BELOW = 0.25  # under a quarter of the ceiling: something is configured wrong


@dataclass(frozen=True)
class Ceiling:
    tok_s: float
    basis: str  # how it was computed, in words

    def judge(self, measured: float) -> str | None:
        """A flag for a single-stream figure, or None when it is plausible."""
        if measured > self.tok_s:
            return (
                f"{measured:.1f} tok/s is above the ceiling of {self.tok_s:.1f} tok/s: a "
                "measurement error (tokens counted wrong, or a cache answered)"
            )
        if measured < FAR_BELOW * self.tok_s:
            return (
                f"{measured:.1f} tok/s is under {FAR_BELOW:.0%} of the ceiling of "
                f"{self.tok_s:.1f} tok/s: likely misconfigured (NCCL over sockets instead of "
                "RDMA, the wrong attention backend, or a dtype other than the one served)"
            )
        return None


def bandwidth(gpu_name: str) -> float | None:
    matches = [k for k in BANDWIDTH_GB_S if k.lower() in gpu_name.lower()]
    return BANDWIDTH_GB_S[max(matches, key=len)] if matches else None


def active_params(model: str) -> float | None:
    """Active parameters in billions from the model's name: `A10B` (MoE), else `122B`."""
    name = model.rsplit("/", 1)[-1]
    moe = re.search(r"[-_]A(\d+(?:\.\d+)?)B\b", name, re.I)
    if moe:
        return float(moe.group(1))
    if re.search(MOE_UNNAMED, name, re.I):
        return None
    dense = re.search(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)B\b", name, re.I)
    return float(dense.group(1)) if dense else None


def stated_precision(model: str) -> tuple[str, float] | None:
    """(words, bytes a weight) for the precision the model's name states; None if it states
    none."""
    return next(
        (
            (words, size)
            for pattern, words, size in BYTES_PER_PARAM
            if re.search(pattern, model, re.I)
        ),
        None,
    )


def bytes_per_param(model: str) -> float:
    stated = stated_precision(model)
    return stated[1] if stated else 2.0  # BF16/FP16, the served default


def ceiling(model: str, gpu_name: str | None, nodes: int) -> Ceiling | str:
    """The ceiling, or why none can be stated."""
    bw = bandwidth(gpu_name or "")
    active = active_params(model)
    if bw is None:
        return f"no memory bandwidth known for GPU {gpu_name or 'unknown'}"
    if active is None:
        return f"no active parameter count in the model's name {model}"
    per_token = active * 1e9 * bytes_per_param(model)
    tok_s = bw * 1e9 * nodes / per_token
    basis = (
        f"{bw:g} GB/s × {nodes} node{'s' if nodes != 1 else ''} ÷ ({active:g}B active × "
        f"{bytes_per_param(model):g} B)"
    )
    return Ceiling(tok_s, basis)
