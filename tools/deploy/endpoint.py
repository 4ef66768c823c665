"""Scout's own measurement, for an engine whose image has no benchmark: at each concurrency of
the sweep, that many SSE streams at once, timed on their chunks (endpoint_http.py).

Labelled as Scout's own wherever it is shown: one run per concurrency, time to first token at
its median only (a handful of streams has no meaningful p90/p99), no goodput.
"""

from __future__ import annotations

import asyncio
import statistics
import time

from tools.deploy.bench_report import Row
from tools.deploy.endpoint_http import EndpointClient
from tools.deploy.engine_bench import Sweep

PROMPT = "Explain in three sentences why tensor parallelism needs a fast interconnect."


async def own_measurement(client: EndpointClient, model: str, sweep: Sweep) -> list[Row]:
    rows = []
    for c in sweep.concurrency:
        started = time.monotonic()
        streams = await asyncio.gather(
            *(client.stream(model, PROMPT, sweep.output_len) for _ in range(c))
        )
        wall = time.monotonic() - started
        ttfts = [s.ttft_s * 1000 for s in streams if s.ttft_s is not None]
        rates = [s.tok_s for s in streams if s.tok_s > 0]
        none: dict[str, float | None] = {"p50": None, "p90": None, "p99": None}
        rows.append(
            Row(
                concurrency=c,
                runs=1,
                ttft_ms={**none, "p50": statistics.median(ttfts) if ttfts else None},
                tpot_ms=none,
                itl_ms=none,
                tok_s_per_user=statistics.median(rates) if rates else None,
                tok_s_aggregate=sum(s.tokens for s in streams) / wall if wall > 0 else 0.0,
                req_s=c / wall if wall > 0 else 0.0,
                goodput_req_s=None,
                spread_pct=0.0,
            )
        )
    return rows
