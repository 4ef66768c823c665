"""What a real engine does to latency beyond its steady rate: a prefix cache, warm-up, batching
contention and run-to-run noise, so that a benchmark with a bad method reads visibly wrong.

- Prefix cache: vLLM's automatic prefix caching (on with `--enable-prefix-caching`, the default
  in V1) keeps the KV blocks of served prompts and reuses them for a prompt with the same
  prefix, so a repeated prompt skips its prefill and its time to first token is little more than
  one decode step (docs.vllm.ai, "Automatic Prefix Caching", design/prefix_caching). Blocks are
  evicted least recently used when space runs out; the capacity here is an assumption.
- Warm-up: the first requests after start pay cold-start costs (kernel compilation, allocator
  growth, connection set-up), the reason AIPerf runs a discarded warm-up phase
  (docs.nvidia.com/aiperf, "Warmup Phase Configuration") and `vllm bench serve` has
  `--num-warmups`. The size of the penalty and how fast it fades are assumptions.
- Contention: with chunked prefill a new request's prompt is computed in the same steps as the
  running requests' decodes, so each arrival stretches one inter-token gap of every stream that
  is decoding (vLLM docs, "Optimization and Tuning", chunked prefill). The steady per-stream
  rate (pace.stream_rate, fitted to a published sweep) already includes it on average; here it
  shows where it happens, and a cached arrival, with nothing to prefill, stretches nothing.
- Noise: each run gets its own small factor on top of per-request jitter, so runs differ as real
  ones do and a spread over runs means something (an assumption: 2 % run to run).

`uncached_ttft_ms` is the truth the simulator knows: the time to first token of a warm engine,
for a prompt it has not seen, at a given load; tests hold benchmark methods against it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .pace import stream_rate

TTFT_GROWTH = 0.25  # TTFT ∝ N^0.25 under load: an assumption, the published run gives N=1 only
REFERENCE_PROMPT = 1024  # tokens: the prompt length the scenario's ttft_s is taken for
PREFILL_SHARE = 0.9  # of ttft_s spent computing the prompt; the rest is scheduling and one step
CACHE_TOKENS = 1_000_000  # prompt tokens the prefix cache holds before evicting (assumption)
WARMUP_REQUESTS = 20  # requests after start until the engine runs at its steady pace
WARMUP_TTFT_EXTRA = 1.5  # the first request's TTFT is 2.5× the warm one, fading linearly
WARMUP_STEP_EXTRA = 0.3  # and its decode steps 1.3×
RUN_NOISE = 0.02  # run-to-run factor, standard deviation
JITTER = 0.04  # per request and per token, standard deviation
MIN_STEP_SHARE = 0.5  # a decode step never gets faster than half its steady length


def prefill_ms(ttft_s: float, input_len: int, concurrency: int = 1) -> float:
    """Milliseconds from a request's arrival to its prompt computed, uncached, at this load (the
    growth with load is waiting for the others' prefills; the work itself is the c=1 figure)."""
    scale = input_len / REFERENCE_PROMPT
    return ttft_s * 1000 * PREFILL_SHARE * scale * max(concurrency, 1) ** TTFT_GROWTH


def uncached_ttft_ms(ttft_s: float, concurrency: int, input_len: int) -> float:
    """The truth: a warm engine's mean time to first token for an unseen prompt at this load."""
    fixed = ttft_s * 1000 * (1 - PREFILL_SHARE) * max(concurrency, 1) ** TTFT_GROWTH
    return fixed + prefill_ms(ttft_s, input_len, concurrency)


def cached_ttft_ms(ttft_s: float, concurrency: int) -> float:
    """A prompt whose every block is cached: scheduling and the last token's step only."""
    return ttft_s * 1000 * (1 - PREFILL_SHARE) * max(concurrency, 1) ** TTFT_GROWTH


def steady_step_ms(tok_s: float, concurrency: int) -> float:
    """The mean inter-token gap one stream sees while `concurrency` decode (contention included)."""
    return 1000 / stream_rate(tok_s, concurrency)


def warmup_fraction(served_before: int) -> float:
    """How cold the engine still is, 1 for its first request down to 0 after WARMUP_REQUESTS."""
    return max(0.0, 1 - served_before / WARMUP_REQUESTS)


@dataclass
class EngineMemory:
    """What one engine remembers between requests: how many it served since it started, the
    prompts in its prefix cache (oldest first, with their token counts), and how many benchmark
    runs it has seen (which seeds each run's noise)."""

    served: int = 0
    runs: int = 0
    cached: dict[str, int] = field(default_factory=dict)
    busy_s: float = 0.0  # simulated seconds spent serving benchmark runs, warm-ups included

    def hit(self, key: str, tokens: int) -> bool:
        """Whether `key` was cached; either way it is the newest entry afterwards (LRU)."""
        found = self.cached.pop(key, None) is not None
        self.cached[key] = tokens
        while sum(self.cached.values()) > CACHE_TOKENS and len(self.cached) > 1:
            self.cached.pop(next(iter(self.cached)))
        return found

    def serve(self) -> float:
        """Count one request; its warm-up fraction."""
        fraction = warmup_fraction(self.served)
        self.served += 1
        return fraction


@contextlib.contextmanager
def remembered(path: Path | None, own: EngineMemory | None = None) -> Iterator[EngineMemory]:
    """The engine's memory, read and written back under an exclusive lock (its HTTP server and a
    benchmark in its container share it); without a path, `own` (one kept in memory)."""
    if path is None:
        yield own if own is not None else EngineMemory()
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        text = handle.read()
        raw = json.loads(text) if text.strip() else {}
        cached = dict(raw.get("cached", []))
        busy = raw.get("busy_s", 0.0)
        memory = EngineMemory(raw.get("served", 0), raw.get("runs", 0), cached, busy)
        yield memory
        handle.seek(0)
        handle.truncate()
        data = {"served": memory.served, "runs": memory.runs, "busy_s": memory.busy_s,
                "cached": list(memory.cached.items())}  # fmt: skip
        handle.write(json.dumps(data))


def memory_path(host_dir: Path, container_id: str, pid: object) -> Path:
    """One file per engine process: a restarted engine starts cold with an empty cache."""
    return host_dir / "engine" / f"memory-{container_id}-{pid}.json"


def text_key(prompt: str) -> str:
    return "text:" + hashlib.sha256(prompt.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Timing:
    """One request as the engine served it, in milliseconds."""

    ttft: float
    itls: list[float]

    @property
    def e2el(self) -> float:
        return self.ttft + sum(self.itls)


def request_timing(
    *,
    ttft_s: float,
    tok_s: float,
    concurrency: int,
    input_len: int,
    output_len: int,
    cached: bool,
    cold: float,
    run_factor: float,
    arrivals_prefill_ms: list[float],
    rng: random.Random,
) -> Timing:
    """One request's TTFT and inter-token gaps: cached or not, how cold the engine was, this
    run's factor, and the prefills of the requests that arrived while it decoded (each
    stretches one gap; the steady step already holds their average, so the rest shrinks)."""
    base = (
        cached_ttft_ms(ttft_s, concurrency)
        if cached
        else uncached_ttft_ms(ttft_s, concurrency, input_len)
    )
    ttft = base * (1 + WARMUP_TTFT_EXTRA * cold) * run_factor * (1 + rng.gauss(0, JITTER))
    gaps = max(output_len - 1, 0)
    step = steady_step_ms(tok_s, concurrency)
    expected = (concurrency - 1) * prefill_ms(ttft_s, input_len)
    plain = max(step * MIN_STEP_SHARE, step - expected / gaps) if gaps else step
    itls = [
        plain * (1 + WARMUP_STEP_EXTRA * cold) * run_factor * (1 + abs(rng.gauss(0, JITTER)))
        for _ in range(gaps)
    ]
    for stall in arrivals_prefill_ms[:gaps]:
        itls[rng.randrange(gaps)] += stall
    return Timing(ttft, itls)


def run_factor(rng: random.Random) -> float:
    return 1 + rng.gauss(0, RUN_NOISE)
