"""A real OpenAI-compatible HTTP/1.1 server on 127.0.0.1 for one served model.

Routes as vLLM has them: `GET /health`, `GET /v1/models`, `POST /v1/completions` and
`POST /v1/chat/completions`, streamed (SSE `data: {...}` chunks, then `data: [DONE]`) or not.
Tokens are paced by `pacing.Pace`, the first one as a real engine would serve it: sooner for a
prompt in its prefix cache, later while it is cold (fakehost/latency_effects.py, with a memory
shared with a benchmark in its container). Each response closes its connection
(`Connection: close`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..fakehost import latency_effects as effects
from . import answers
from .pacing import Pace, count_tokens
from .stall import Stall

MAX_BODY = 16 << 20
DEFAULT_CHAT_TOKENS = 48
DEFAULT_COMPLETION_TOKENS = 16
MAX_TOKENS = 4096
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}


@dataclass
class ServedModel:
    """What a `serve` record in the host state says about the model behind the endpoint."""

    model: str
    served_name: str
    max_model_len: int
    pace: Pace
    tool_parser: str = ""
    dead: bool = False
    gibberish: bool = False
    recall_tokens: int | None = None
    stall_after: int | None = None
    stall_concurrency: int = 2
    memory: Path | None = None  # the engine's latency_effects memory, shared with its container

    @classmethod
    def from_record(cls, record: dict[str, Any], memory: Path | None = None) -> ServedModel:
        generation = record.get("generation") or {}
        return cls(
            model=record["model"],
            served_name=record.get("served_name") or record["model"],
            max_model_len=int(record.get("max_model_len", 262144)),
            pace=Pace(float(record["tok_s"]), float(record["ttft_s"])),
            tool_parser=record.get("tool_parser") or "",
            dead=bool(generation.get("dead")),
            gibberish=bool(generation.get("gibberish")),
            recall_tokens=generation.get("recall_tokens"),
            stall_after=generation.get("stall_after"),
            stall_concurrency=int(generation.get("stall_concurrency") or 2),
            memory=memory,
        )


class HttpError(Exception):
    def __init__(self, status: int, message: str, kind: str = "BadRequestError") -> None:
        super().__init__(message)
        self.status, self.kind = status, kind


class OpenAIServer:
    """`await start()` → port; `await close()` ends the listener and every open response."""

    def __init__(self, served: ServedModel, log: Path | None = None) -> None:
        """`log`: the engine container's log, where a wedge (stall.py) writes what it logs."""
        self.served = served
        self.stall = Stall(served.stall_after, served.stall_concurrency, log)
        self.port = 0
        self.active_streams = 0
        self._memory = effects.EngineMemory()
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def close(self) -> None:
        if self._server:
            self._server.close()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        if self._server:
            await self._server.wait_closed()
            self._server = None

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            await self._handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self._handlers.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, _version = [*lines[0].split(" "), "", "", ""][:3]
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])
        }
        length = min(int(headers.get("content-length", "0") or 0), MAX_BODY)
        body = await reader.readexactly(length) if length else b""
        path = target.split("?", 1)[0]
        try:
            await self._route(method, path, body, writer)
        except HttpError as exc:
            error = {"object": "error", "message": str(exc), "type": exc.kind, "param": None,
                     "code": exc.status}  # fmt: skip
            await _send_json(writer, exc.status, error)

    async def _route(
        self, method: str, path: str, body: bytes, writer: asyncio.StreamWriter
    ) -> None:
        routes = {
            "/health": "GET",
            "/v1/models": "GET",
            "/v1/completions": "POST",
            "/v1/chat/completions": "POST",
        }
        if path not in routes:
            raise HttpError(404, "Not Found", "NotFoundError")
        if method != routes[path]:
            raise HttpError(405, "Method Not Allowed", "MethodNotAllowed")
        if path == "/health":
            await _send(writer, 200, b"", "application/json")
        elif path == "/v1/models":
            await _send_json(writer, 200, self._models())
        else:
            await self._generate(path.endswith("chat/completions"), _json_body(body), writer)

    def _models(self) -> dict[str, Any]:
        s = self.served
        return {
            "object": "list",
            "data": [
                {
                    "id": s.served_name,
                    "object": "model",
                    "created": int(time.time()),
                    "owned_by": "vllm",
                    "root": s.model,
                    "parent": None,
                    "max_model_len": s.max_model_len,
                }
            ],
        }

    async def _generate(
        self, chat: bool, request: dict[str, Any], writer: asyncio.StreamWriter
    ) -> None:
        if request.get("model", self.served.served_name) != self.served.served_name:
            raise HttpError(
                404, f"The model `{request.get('model')}` does not exist.", "NotFoundError"
            )
        prompt = _prompt_text(chat, request)
        limit = request.get("max_completion_tokens") or request.get("max_tokens")
        default = DEFAULT_CHAT_TOKENS if chat else DEFAULT_COMPLETION_TOKENS
        n = min(int(limit), MAX_TOKENS) if limit else default
        prompt_tokens = count_tokens(prompt)
        self._check_length(prompt_tokens, n)
        call = self._tool_call(chat, request, prompt, prompt_tokens)
        reply = answers.answer(prompt, prompt_tokens, self.served.recall_tokens)
        pieces = [] if call else answers.pieces(reply, n)
        if self.served.gibberish:  # a broken build: every token "!" (vllm#13035, vllm#9769)
            call, reply, pieces = None, "!", ["!"] * n
        finish = "length" if limit or not chat else "stop"
        finish = "tool_calls" if call else "stop" if reply is not None else finish
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": max(len(pieces), 1),
                 "total_tokens": prompt_tokens + max(len(pieces), 1)}  # fmt: skip
        meta = {
            "id": ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex,
            "object": "chat.completion" if chat else "text_completion",
            "created": int(time.time()),
            "model": self.served.served_name,
        }
        if self.served.dead:
            await _hang(writer, bool(request.get("stream")))
        if request.get("stream") and not call:
            include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
            first = self._first_token_s(prompt, prompt_tokens)
            usage = usage if include_usage else None
            await self._stream(chat, pieces, first, finish, meta, usage, writer)
            return
        first = self._first_token_s(prompt, prompt_tokens)
        text = "".join([piece async for piece in self._tokens(pieces or [""], first)])
        choice: dict[str, Any] = {"index": 0, "logprobs": None, "finish_reason": finish}
        if chat:
            choice["message"] = {"role": "assistant", "content": None if call else text,
                                 "tool_calls": [_tool_call_item(call)] if call else []}  # fmt: skip
        else:
            choice["text"] = text
        await _send_json(writer, 200, {**meta, "choices": [choice], "usage": usage})

    def _check_length(self, prompt_tokens: int, n: int) -> None:
        """vLLM refuses a request longer than --max-model-len, in these words."""
        limit = self.served.max_model_len
        if prompt_tokens + n > limit:
            raise HttpError(
                400,
                f"This model's maximum context length is {limit} tokens. However, you requested "
                f"{prompt_tokens + n} tokens ({prompt_tokens} in the messages, {n} in the "
                "completion). Please reduce the length of the messages or completion.",
            )

    def _tool_call(
        self, chat: bool, request: dict[str, Any], prompt: str, prompt_tokens: int
    ) -> dict[str, Any] | None:
        """The tool call, when tools are offered; without a parser, vLLM's refusal."""
        tools = request.get("tools")
        if not chat or not tools or request.get("tool_choice") == "none":
            return None
        if not self.served.tool_parser:
            raise HttpError(
                400,
                '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser '
                "to be set",
            )
        return answers.tool_call(prompt, tools, prompt_tokens, self.served.recall_tokens)

    def _first_token_s(self, prompt: str, prompt_tokens: int) -> float:
        """Seconds to the first token: a cached prompt skips its prefill, a cold engine is slow."""
        with effects.remembered(self.served.memory, self._memory) as memory:
            cached = memory.hit(effects.text_key(prompt), prompt_tokens)
            cold = memory.serve()
        share = 1 - effects.PREFILL_SHARE if cached else 1.0
        return self.served.pace.ttft_s * share * (1 + effects.WARMUP_TTFT_EXTRA * cold)

    async def _tokens(self, pieces: list[str], first_s: float) -> Any:
        self.active_streams += 1
        try:
            await asyncio.sleep(first_s)
            for i, piece in enumerate(pieces):
                if i:
                    await asyncio.sleep(self.served.pace.token_delay(self.active_streams))
                await self.stall.gate()
                yield piece
            self.stall.served(self.active_streams)
        finally:
            self.active_streams -= 1

    async def _stream(
        self,
        chat: bool,
        pieces: list[str],
        first_s: float,
        finish: str,
        meta: dict[str, Any],
        usage: dict[str, Any] | None,
        writer: asyncio.StreamWriter,
    ) -> None:
        chunk_meta = {**meta, "object": "chat.completion.chunk" if chat else "text_completion"}
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
            b"cache-control: no-cache\r\nconnection: close\r\n\r\n"
        )

        async def event(choices: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> None:
            data = {**chunk_meta, "choices": choices, **(extra or {})}
            writer.write(f"data: {json.dumps(data)}\n\n".encode())
            await writer.drain()

        if chat:
            await event([{"index": 0, "delta": {"role": "assistant", "content": ""},
                          "logprobs": None, "finish_reason": None}])  # fmt: skip
        async for piece in self._tokens(pieces, first_s):
            body = {"delta": {"content": piece}} if chat else {"text": piece}
            await event([{"index": 0, **body, "logprobs": None, "finish_reason": None}])
        last = {"delta": {}} if chat else {"text": ""}
        await event([{"index": 0, **last, "logprobs": None, "finish_reason": finish}])
        if usage:
            await event([], {"usage": usage})
        writer.write(b"data: [DONE]\n\n")
        await writer.drain()


async def _hang(writer: asyncio.StreamWriter, stream: bool) -> None:
    """A dead engine core: the request is accepted (a stream even gets its 200) and then nothing
    comes, until the client gives up or the server closes."""
    if stream:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n\r\n")
        await writer.drain()
    await asyncio.Event().wait()


def _tool_call_item(call: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"chatcmpl-tool-{uuid.uuid4().hex}", "type": "function", "function": call}


def _json_body(body: bytes) -> dict[str, Any]:
    try:
        request = json.loads(body or b"{}")
    except ValueError:
        raise HttpError(400, "The request body is not valid JSON.") from None
    if not isinstance(request, dict):
        raise HttpError(400, "The request body must be a JSON object.")
    return request


def _prompt_text(chat: bool, request: dict[str, Any]) -> str:
    if not chat:
        prompt = request.get("prompt")
        if not isinstance(prompt, str | list) or not prompt:
            raise HttpError(400, "Field `prompt` is required.")
        return prompt if isinstance(prompt, str) else " ".join(map(str, prompt))
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise HttpError(400, "Field `messages` must be a non-empty list.")
    return " ".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))


async def _send(writer: asyncio.StreamWriter, status: int, body: bytes, kind: str) -> None:
    writer.write(
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\ncontent-type: {kind}\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
        + body
    )
    await writer.drain()


async def _send_json(writer: asyncio.StreamWriter, status: int, data: dict[str, Any]) -> None:
    await _send(writer, status, json.dumps(data).encode(), "application/json")
