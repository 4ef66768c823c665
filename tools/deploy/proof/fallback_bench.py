"""Scout's own measurement, for an engine whose image has no benchmark: at each concurrency of
the sweep, that many SSE streams kept busy (endpoint_http.py), by the same method as the
engine's benchmark is asked (engine_bench.py): every request its own prompt, which starts with
words no other request (of this proof or an earlier one) starts with, so the engine's prefix
cache holds none of them; warm-ups first, discarded; outputs of fixed length; the level's
measured requests split over its runs and pooled (bench_pooling.py).

Labelled as Scout's own wherever it is shown: it times chunks as they arrive over HTTP, so it
has no inter-token percentiles, and no goodput.
"""

from __future__ import annotations

import asyncio
import secrets
import statistics
import time
from collections.abc import Iterator

from tools.deploy.proof.bench_pooling import ci95, percentiles
from tools.deploy.proof.engine_bench import MEASURED, Sweep
from tools.deploy.proof.http import EndpointClient, StreamStats
from tools.deploy.proof.report import PERCENTILES, Row

FILLER = "The river runs past the old mill and the grass grows green by the water. "
CHARS_PER_TOKEN = 4  # English prose in BPE tokenizers
QUESTION = "Explain in three sentences why tensor parallelism needs a fast interconnect."


def prompts(input_len: int) -> Iterator[str]:
    """Endless prompts of about `input_len` tokens, each opening with its own random words."""
    body = FILLER * max(1, input_len * CHARS_PER_TOKEN // len(FILLER) - 1)
    while True:
        yield f"Request {secrets.token_hex(8)}. {body}{QUESTION}"


async def _level(
    client: EndpointClient, model: str, c: int, count: int, output_len: int, fresh: Iterator[str]
) -> tuple[list[StreamStats], float]:
    """`count` requests through `c` streams kept busy; their stats and the wall time."""
    queue = list(range(count))
    done: list[StreamStats] = []

    async def stream_worker() -> None:
        while queue:
            queue.pop()
            done.append(await client.stream(model, next(fresh), output_len))

    started = time.monotonic()
    await asyncio.gather(*(stream_worker() for _ in range(min(c, count))))
    return done, time.monotonic() - started


async def own_measurement(client: EndpointClient, model: str, sweep: Sweep) -> list[Row]:
    fresh = prompts(sweep.input_len)
    rows = []
    per_run = -(-MEASURED[sweep.mode] // sweep.runs)
    for c in sweep.concurrency:
        ttfts: list[float] = []
        tpots: list[float] = []
        tokens, wall, aggregate = 0, 0.0, []
        for run in range(1, sweep.runs + 1):
            await _level(client, model, c, sweep.warmups(c, run), sweep.output_len, fresh)
            streams, took = await _level(client, model, c, per_run, sweep.output_len, fresh)
            ttfts += [s.ttft_s * 1000 for s in streams if s.ttft_s is not None]
            tpots += [1000 / s.tok_s for s in streams if s.tok_s > 0]
            made = sum(s.tokens for s in streams)
            tokens, wall = tokens + made, wall + took
            aggregate.append(made / took if took > 0 else 0.0)
        none: dict[str, float | None] = dict.fromkeys((f"p{p}" for p in PERCENTILES), None)
        middle = statistics.median(aggregate)
        rows.append(
            Row(
                concurrency=c,
                runs=sweep.runs,
                ttft_ms=percentiles(ttfts, PERCENTILES) if ttfts else none,
                tpot_ms=percentiles(tpots, PERCENTILES) if tpots else none,
                itl_ms=none,
                tok_s_per_user=1000 / statistics.median(tpots) if tpots else None,
                tok_s_aggregate=tokens / wall if wall > 0 else 0.0,
                req_s=len(ttfts) / wall if wall > 0 else 0.0,
                goodput_req_s=None,
                spread_pct=100 * (max(aggregate) - min(aggregate)) / middle if middle else 0.0,
                requests=len(ttfts),
                tok_s_ci=ci95(aggregate),
            )
        )
    return rows


def own_method(sweep: Sweep) -> str:
    """How Scout's own streams measured, in words the report prints."""
    return (
        f"{sweep.mode}, {MEASURED[sweep.mode]:,} measured requests per level over {sweep.runs} "
        "runs, each its own prompt (none shares a cached prefix); warm-ups before each run, "
        f"discarded; outputs fixed at {sweep.output_len} tokens (ignore_eos); the checks ran "
        "before, not during"
    )
