"""HTTP to one serving engine's OpenAI-compatible API: health, the model list, a chat request, and
a streamed completion timed on its SSE chunks (tokens from `usage` when the server reports it,
stream_options.include_usage, else one per content chunk).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import httpx


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

    async def models(self) -> dict[str, int | None]:
        """Served model → its max_model_len (vLLM lists it; None where the server does not)."""
        response = await self._get("/v1/models")
        try:
            response.raise_for_status()
            return {m["id"]: m.get("max_model_len") for m in response.json()["data"]}
        except (httpx.HTTPStatusError, ValueError, KeyError, TypeError) as exc:
            raise EndpointError(
                f"GET /v1/models on {self.where} gave no model list ({exc}); is this an "
                "OpenAI-compatible server?"
            ) from None

    async def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        """One non-streamed chat completion; an error names the engine's own message."""
        response = await self._post({**body, "stream": False})
        try:
            response.raise_for_status()
            reply = response.json()
        except (httpx.HTTPStatusError, ValueError) as exc:
            raise EndpointError(
                f"a chat completion on {self.where} failed ({exc}): {response.text[:300]}"
            ) from None
        if not isinstance(reply, dict):
            raise EndpointError(f"a chat completion on {self.where} answered {reply!r}")
        return reply

    async def stream(self, model: str, prompt: str, max_tokens: int) -> StreamStats:
        body = {
            "model": model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
            "ignore_eos": True,  # vLLM's and SGLang's sampling extra: outputs of fixed length
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
