"""`python3 -c CODE` asking an image's torch for the NCCL it links, as the image probe does.

`torch.cuda.nccl.version()` answers `(major, minor, patch)` (torch/cuda/nccl.py); the probe
prints it as `NCCL version 2.28.9`; asked for the build too, it prints the library's path, the
version string NCCL compiles into itself and the ELF build ID (`NCCL build PATH NCCL version
2.28.9+cuda13.0 build-id HEX`). An image with no engine in it has no torch either: Python's
`ModuleNotFoundError`, exit 1. Any other code is beyond what the sim runs.
"""

from __future__ import annotations

import sys

from .container import Container

ENGINES = ("vllm", "sglang")
SPARK_NCCL = "2.28.9"  # sim/scenario.py Image.nccl's default
SPARK_NCCL_BUILD = "2.28.9+cuda13.0 build-id c0db9360e4b1a7d2"  # Image.nccl_build's default
LIBRARY = "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2"


def run_torch_code(ctr: Container, code: str) -> int:
    if not any(e in ctr.tools() for e in ENGINES):
        sys.stderr.write(
            'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
            "ModuleNotFoundError: No module named 'torch'\n"
        )
        return 1
    if "torch.cuda.nccl.version()" not in code:
        sys.stderr.write(f"python3: the sim runs no such code: {code}\n")
        return 1
    print(f"NCCL version {ctr.image().get('nccl', SPARK_NCCL)}")
    if "build-id" in code:  # the probe's second question: which build (tools/recon/image_probe)
        version, _, build = ctr.image().get("nccl_build", SPARK_NCCL_BUILD).partition(" ")
        print(f"NCCL build {LIBRARY} NCCL version {version} {build}")
    return 0
