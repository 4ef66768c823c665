"""What an error line means, by the layer that failed, for the error grammar (errors.py).

Two layers decide what a deployment does next, so their failures are errors whatever level the
tool printed them at, and they are kept as the cause when a later, vaguer line ends the log:

- `FABRIC`: the network between GPUs and the collectives on it. NCCL's transport warnings
  (`NET/IB : Got completion from peer … status=12 … vendor err 129`: the retry counter ran out,
  a miswired or flapping RoCE/IB link), UCX's `Transport retry count exceeded` (the same verbs
  completion status), verbs calls that failed, Gloo's lost peers, collective timeouts and the
  watchdog that aborts a communicator.
- `MEMORY`: a resource an engine could not get: CUDA out of memory in any engine family's words
  (PyTorch's `OutOfMemoryError`, TensorRT-LLM's `OutOfMemory`, llama.cpp's failed buffer
  allocation, vLLM's and SGLang's KV-cache checks), and host memory or disk running out.

A third kind of line is no error yet but dooms the job: a tool warning that it cannot finish
(huggingface_hub's `Not enough free disk space to download the file`, a quota that will be
exceeded). The job keeps running and may even show a small file at 100 %; it will not finish.

Read from NCCL's net_ib transport, vLLM's worker and KV-cache checks, TensorRT-LLM's allocator
and llama.cpp's CUDA backend, as their real reports quote them (tests/fixtures/jobs/).
"""

from __future__ import annotations

import re

FABRIC, MEMORY = "fabric", "memory"

_MEANINGS = (
    (
        FABRIC,
        re.compile(
            r"\bNCCL WARN\b.*\b(?:completion|error|failed|fail|timeout|timed out|abort|"
            r"unreachable|closed|refused|mismatch)|"
            r"\bNET/(?:IB|IBP|Socket)\s*:.*\b(?:completion|error|failed)|"
            r"\bibv_\w+ failed\b|\bUCX\s+(?:ERROR|error)\b|retry count exceeded|"
            r"completion with error|\bvendor err\b|"
            r"\bgloo\b.*\b(?:Connection (?:closed|reset|refused)|timed out|Timeout)|"
            r"Watchdog caught collective operation timeout|collective operation timeout|"
            r"\bNCCL (?:communicator|comm)\b.*\b(?:aborted|timed out)|"
            r"\bProcessGroupNCCL\b.*\b(?:timed? ?out|Timeout|abort)",
            re.I,
        ),
    ),
    (
        MEMORY,
        re.compile(
            r"out of memory|\bOutOfMemory|\bOOM\b|No available memory for the cache blocks|"
            r"Free memory on device .* less than desired|not enough (?:GPU |device )?memory|"
            r"insufficient (?:GPU |device )?memory|"
            r"KV cache .*(?:exceeds|larger than|not enough|insufficient)|"
            r"(?:failed to allocate|allocating [\d.]+ ?[KMG]i?B .*failed|cudaMalloc\w* failed)|"
            r"CUBLAS_STATUS_ALLOC_FAILED|cannot allocate memory|no space left on device",
            re.I,
        ),
    ),
)


def meaning(text: str) -> str | None:
    """The layer this line says failed (FABRIC or MEMORY), or None for any other line."""
    return next((name for name, pattern in _MEANINGS if pattern.search(text)), None)


_CANNOT_FINISH = re.compile(
    r"not enough (?:free )?(?:disk )?space|insufficient (?:free )?(?:disk )?space|"
    r"disk quota exceeded|would exceed (?:the )?(?:disk|quota)",
    re.I,
)


def cannot_finish(messages: list[str]) -> str | None:
    """The first line warning that the job cannot finish (its message), or None."""
    return next((line for line in messages if _CANNOT_FINISH.search(line)), None)
