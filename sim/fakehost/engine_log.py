"""What an engine prints while it loads, over the simulated clock, as the real ones print it.

vLLM's banner (tests/fixtures/jobs/docker_pull_vllm_openai_latest_then_vllm_0.19_startup_gpu_
mem_error.txt, vllm_serve_dgx_spark_ngc_26.03_ray_head_banner_startup.txt), the checkpoint
shards bar, one state per shard (vllm_serve_multinode_ray_405b_fp8_slow_shard_loading.txt; in a
file tqdm rewrites it with \\r), `Model loading took N GiB memory and N seconds`
(vllm_serve_v1_enginecore_model_loading_kv_cache_cudagraphs.txt), and SGLang's readiness banner
after uvicorn's lines (sglang_launch_server_tail_uvicorn_warmup_fired_up.txt). The weights load
at the host's `rates.copy_mb_s` (its disk), compressed by `rates.time_scale` (pace.py).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from . import tqdm
from .pace import ticks

GIB = 1024**3
SHARD_GB = 5.0  # safetensors shards of large checkpoints are ~5 GB
_ART = (
    "       █     █     █▄   ▄█",
    " ▄▄ ▄█ █     █     █ ▀▄▀ █  version {version}",
    "  █▄█▀ █     █     █     █  model   {model}",
    "   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀",
)


def _line(where: str, text: str) -> None:
    print(f"(APIServer pid=1) INFO {time.strftime('%m-%d %H:%M:%S')} [{where}] {text}", flush=True)


def banner(version: str, model: str) -> None:
    for art in ("", *_ART, ""):
        _line("utils.py:299", art.format(version=version, model=model))


def load_weights(model: str, per_node_gib: float, state: dict[str, Any], host_dir: Path) -> float:
    """Print the shards bar while the weights load; the simulated seconds it took."""
    files = state.get("hub", {}).get(model, {}).get("files")
    shards = int(files) if files else max(1, round(per_node_gib * GIB / 1e9 / SHARD_GB))
    seconds = per_node_gib * GIB / (float(state["rates"]["copy_mb_s"]) * 1e6)
    for passed in ticks(seconds, state, host_dir):
        done = min(shards, int(shards * passed / seconds)) if seconds else shards
        sys.stderr.write("\r" + tqdm.shards(done, shards, passed))
        sys.stderr.flush()
    sys.stderr.write("\n")
    sys.stderr.flush()
    return seconds


def fired_up() -> None:
    """SGLang's readiness line, after its warm-up requests."""
    print(f"[{time.strftime('%Y-%m-%d %H:%M:%S')}] The server is fired up and ready to roll!")
    sys.stdout.flush()
