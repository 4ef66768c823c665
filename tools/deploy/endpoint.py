"""Proving an OpenAI-compatible endpoint: health, models, one completion, and a streamed benchmark.

Time to first token and tokens/s are measured on SSE streams; tokens come from `usage` when the
server reports it (stream_options.include_usage), else one per content chunk.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

DEFAULT_PROMPT = "Explain in three sentences why tensor parallelism needs a fast interconnect."


class EndpointError(Exception):
    """The endpoint did not answer as a serving engine should; the message says what to do."""


@dataclass
class StreamStats:
    ttft_s: float | None
    tokens: int
    duration_s: float
    tokens_from: str

    @property
    def tok_s(self) -> float:
        """Decode rate: tokens after the first one, over the time after the first one."""
        if self.ttft_s is None or self.tokens < 2 or self.duration_s <= self.ttft_s:
            return 0.0
        return (self.tokens - 1) / (self.duration_s - self.ttft_s)


@dataclass
class EndpointReport:
    health_status: int
    models: list[str]
    model: str
    completion: str
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
            f"health ok · model {self.model} · single stream {single.tok_s:.1f} tok/s, "
            f"TTFT {ttft} · {self.concurrency} streams {self.aggregate_tok_s:.1f} tok/s aggregate"
        )


class EndpointClient:
    """Talks to one engine's HTTP API (through whatever address reaches it, e.g. a forward)."""

    def __init__(self, http: httpx.AsyncClient, where: str) -> None:
        self.http = http
        self.where = where

    async def health(self) -> int:
        response = await self._get("/health")
        if response.status_code != 200:
            raise EndpointError(
                f"GET /health on {self.where} answered {response.status_code}: the engine is "
                "up but not ready; it may still be loading weights — check `docker logs` of its "
                "container and try again in a minute"
            )
        return response.status_code

    async def models(self) -> list[str]:
        response = await self._get("/v1/models")
        try:
            response.raise_for_status()
            return [m["id"] for m in response.json()["data"]]
        except (httpx.HTTPStatusError, ValueError, KeyError, TypeError) as exc:
            raise EndpointError(
                f"GET /v1/models on {self.where} gave no model list ({exc}); is this an "
                "OpenAI-compatible server?"
            ) from None

    async def complete(self, model: str, prompt: str, max_tokens: int) -> str:
        body = {"model": model, "messages": [{"role": "user", "content": prompt}],
                "max_tokens": max_tokens, "stream": False}  # fmt: skip
        response = await self._post(body)
        try:
            response.raise_for_status()
            return response.json()["choices"][0]["message"]["content"] or ""
        except (httpx.HTTPStatusError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise EndpointError(
                f"the chat completion on {self.where} failed ({exc}): {response.text[:300]}"
            ) from None

    async def stream(self, model: str, prompt: str, max_tokens: int) -> StreamStats:
        body = {
            "model": model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        started = time.monotonic()
        first: float | None = None
        chunks = 0
        usage_tokens: int | None = None
        try:
            async with self.http.stream("POST", "/v1/chat/completions", json=body) as response:
                if response.status_code != 200:
                    await response.aread()
                    raise EndpointError(
                        f"streamed completion on {self.where} answered {response.status_code}: "
                        f"{response.text[:300]}"
                    )
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    payload = line[5:].strip()
                    if payload == "[DONE]":
                        break
                    event = json.loads(payload)
                    if event.get("usage"):
                        usage_tokens = event["usage"].get("completion_tokens", usage_tokens)
                    for choice in event.get("choices") or []:
                        text = (choice.get("delta") or {}).get("content") or choice.get("text")
                        if text:
                            chunks += 1
                            first = first if first is not None else time.monotonic() - started
        except httpx.HTTPError as exc:
            raise EndpointError(f"the stream from {self.where} broke: {exc}") from None
        duration = time.monotonic() - started
        if usage_tokens is not None:
            return StreamStats(first, usage_tokens, duration, "usage")
        return StreamStats(first, chunks, duration, "chunks")

    async def _get(self, path: str) -> httpx.Response:
        try:
            return await self.http.get(path)
        except httpx.HTTPError as exc:
            raise EndpointError(self._unreachable(exc)) from None

    async def _post(self, body: dict[str, Any]) -> httpx.Response:
        try:
            return await self.http.post("/v1/chat/completions", json=body)
        except httpx.HTTPError as exc:
            raise EndpointError(self._unreachable(exc)) from None

    def _unreachable(self, exc: Exception) -> str:
        return (
            f"nothing answers HTTP on {self.where} ({type(exc).__name__}: {exc}); check that the "
            "engine was started with that --port and --host 0.0.0.0, and `docker logs` of its "
            "container"
        )


async def check_endpoint(
    client: EndpointClient,
    *,
    model: str | None,
    concurrency: int,
    max_tokens: int,
    prompt: str = DEFAULT_PROMPT,
) -> EndpointReport:
    """Health, models, one completion, one stream, then `concurrency` streams at once."""
    status = await client.health()
    models = await client.models()
    if model is None:
        if not models:
            raise EndpointError(f"{client.where} serves no model (/v1/models is empty)")
        model = models[0]
    elif model not in models:
        listed = ", ".join(models) or "none"
        raise EndpointError(f"{client.where} does not serve {model}; /v1/models lists: {listed}")
    completion = await client.complete(model, prompt, min(max_tokens, 64))
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
        completion=completion,
        single=single,
        concurrency=concurrency,
        concurrent=list(streams),
        aggregate_tok_s=total / wall if wall > 0 else 0.0,
    )
