"""`vllm serve` and SGLang's `launch_server` starting up: shards loaded, then ready, or the error.

From the captures in tests/fixtures/jobs/ (vllm_serve_*, sglang_*): the banner's version and
model, `Loading safetensors checkpoint shards:  12% Completed | 10/86 [11:08<2:17:15,
108.36s/it]` (also behind Ray's `(RayWorkerWrapper pid=…, ip=…)` prefixes, with `[repeated 30x
across cluster]`), `Model loading took 2.0513 GiB memory and 27.2 seconds`, the CUDA-graph
capture bars, `Application startup complete.` (vLLM, also NVIDIA's playbook's readiness line)
and `The server is fired up and ready to roll!` (SGLang). A failed start is read by the error
grammar every reader shares (errors.py): the exception line of its traceback.
"""

from __future__ import annotations

import re

from tools.jobs.progress.lines import said_lines, segments
from tools.jobs.progress.model import Progress, percent
from tools.jobs.progress.tqdm import bars, clock

KIND = "engine"
_READY = re.compile(r"Application startup complete|The server is fired up and ready to roll")
_LISTENING = re.compile(r"Uvicorn running on (?P<url>\S+)")
_WEIGHTS = re.compile(r"(?:Model loading|Loading model weights) took (?P<size>[\d.]+ Gi?B)")
_VERSION = re.compile(r"\bversion (?P<version>\d[\w.+-]*)\s*$")
_KV_CACHE = re.compile(r"GPU KV cache size: (?P<tokens>[\d,]+) tokens")
# Any loader's bar: `Loading safetensors checkpoint shards`, `Loading pt checkpoint shards`,
# `Loading safetensors using Fastsafetensor loader`, InstantTensor's and Run:ai's loaders
_LOADER_BAR = re.compile(
    r"\bLoad(?:ing)?\b.*\b(?:shards?|safetensors|weights|checkpoint|loader)\b", re.I
)


def read_engine(tail: str, milestones: str) -> Progress:
    text = milestones + "\n" + tail
    lines = said_lines(text)
    facts: dict[str, object] = {}
    for line in lines:
        if match := _VERSION.search(line):
            facts["version"] = match["version"]
        if match := _WEIGHTS.search(line):
            facts["weights_loaded"] = match["size"]
        if match := _KV_CACHE.search(line):
            facts["kv_cache_tokens"] = int(match["tokens"].replace(",", ""))
        if match := _LISTENING.search(line):
            facts["url"] = match["url"]
    states = bars(segments(text))
    shards = next((b for b in reversed(states) if _LOADER_BAR.search(b.desc)), None)
    ready = any(_READY.search(line) for line in lines)
    fraction = None
    if shards is not None and shards.total:
        facts.update(shards_done=int(shards.done), shards_total=int(shards.total))
        fraction = percent(shards.done, shards.total)
    if ready:
        summary, fraction = "ready: application startup complete", 1.0
        if "url" in facts:
            summary += f", listening on {facts['url']}"
    elif shards is not None and shards.total:
        what = "checkpoint shards" if "shard" in shards.desc else f"weights ({shards.desc})"
        summary = f"loading {what} {int(shards.done)}/{int(shards.total)}"
        summary += f" ({round(100 * (fraction or 0))}%)"
        if shards.remaining_s is not None and shards.done < shards.total:
            summary += f", ETA {clock(shards.remaining_s)}"
    elif "weights_loaded" in facts:
        summary = f"weights loaded ({facts['weights_loaded']}), starting up"
    else:
        summary = "starting" + (f" (version {facts['version']})" if "version" in facts else "")
    return Progress(KIND, summary, fraction, ready=ready, facts=facts)
