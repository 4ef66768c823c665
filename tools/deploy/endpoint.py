"""Proving an OpenAI-compatible endpoint: health, models, generations whose content is checked
(generation_checks.py), then one stream and several at once for time to first token and tokens/s.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from tools.deploy.endpoint_http import EndpointClient, EndpointError, StreamStats
from tools.deploy.generation_checks import GenerationChecks, check_generation

DEFAULT_PROMPT = "Explain in three sentences why tensor parallelism needs a fast interconnect."


@dataclass
class EndpointReport:
    health_status: int
    models: list[str]
    model: str
    generation: GenerationChecks
    single: StreamStats
    concurrency: int
    concurrent: list[StreamStats] = field(default_factory=list)
    aggregate_tok_s: float = 0.0

    def to_data(self) -> dict[str, Any]:
        data = asdict(self)
        data["single"]["tok_s"] = round(self.single.tok_s, 2)
        for stats, row in zip(self.concurrent, data["concurrent"], strict=True):
            row["tok_s"] = round(stats.tok_s, 2)
        data["aggregate_tok_s"] = round(self.aggregate_tok_s, 2)
        return data

    def render(self) -> str:
        single = self.single
        ttft = f"{single.ttft_s:.2f} s" if single.ttft_s is not None else "n/a"
        return (
            f"health ok · model {self.model} · {self.generation.render()} · "
            f"single stream {single.tok_s:.1f} tok/s, "
            f"TTFT {ttft} · {self.concurrency} streams {self.aggregate_tok_s:.1f} tok/s aggregate"
        )


async def check_endpoint(
    client: EndpointClient,
    *,
    model: str | None,
    concurrency: int,
    max_tokens: int,
    generation_timeout_s: float,
    prompt: str = DEFAULT_PROMPT,
) -> EndpointReport:
    """Health, models, the generation checks, one stream, then `concurrency` streams at once."""
    status = await client.health()
    lengths = await client.models()
    models = list(lengths)
    if model is None:
        if not models:
            raise EndpointError(f"{client.where} serves no model (/v1/models is empty)")
        model = models[0]
    elif model not in models:
        listed = ", ".join(models) or "none"
        raise EndpointError(f"{client.where} does not serve {model}; /v1/models lists: {listed}")
    generation = await check_generation(
        client, model, lengths[model], timeout_s=generation_timeout_s
    )
    single = await client.stream(model, prompt, max_tokens)
    started = time.monotonic()
    streams = await asyncio.gather(
        *(client.stream(model, prompt, max_tokens) for _ in range(concurrency))
    )
    wall = time.monotonic() - started
    total = sum(s.tokens for s in streams)
    return EndpointReport(
        health_status=status,
        models=models,
        model=model,
        generation=generation,
        single=single,
        concurrency=concurrency,
        concurrent=list(streams),
        aggregate_tok_s=total / wall if wall > 0 else 0.0,
    )
