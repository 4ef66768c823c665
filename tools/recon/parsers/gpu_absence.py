"""What a host says when it has no GPU an engine could use, and what each saying means.

`nvidia-smi` absent (no NVIDIA driver installed), `No devices were found` (the driver is loaded
but sees no GPU: none fitted, or not passed through to the VM/container), and the driver not
loaded or not matching its library (`NVIDIA-SMI has failed because it couldn't communicate with
the NVIDIA driver`, `Failed to initialize NVML: Driver/library version mismatch`). Each is a
fact in itself: the host has no usable GPU, and why.
"""

from __future__ import annotations

import re

_SAYINGS = (
    (re.compile(r"No devices were found"), "the driver is loaded but sees no GPU"),
    (
        re.compile(
            r"couldn't communicate with the NVIDIA driver|NVIDIA driver is not loaded|"
            r"Driver/library version mismatch|Failed to initialize NVML",
            re.I,
        ),
        "the NVIDIA driver is not loaded (or does not match its library)",
    ),
    (
        re.compile(r"nvidia-smi: (?:command )?not found|nvidia-smi.*No such file", re.I),
        "nvidia-smi is not installed: no NVIDIA driver on this host",
    ),
)
NO_GPU_SIGNS = tuple(pattern for pattern, _meaning in _SAYINGS)


def no_gpu_reasons(text: str) -> list[str]:
    """Why the host has no usable GPU, for each saying in `text` (none: it did not say so)."""
    return [meaning for pattern, meaning in _SAYINGS if pattern.search(text)]
