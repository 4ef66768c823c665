"""A local stand-in for the Anthropic Messages API that answers from a script.

Tests and `scout demo` point the real `anthropic` SDK at it (`base_url=server.url`), so every
byte the SDK reads must look like the real API: SSE frames, JSON Messages, error bodies, retry
headers. It runs stdlib `ThreadingHTTPServer` in a daemon thread, so it serves any event loop
(pytest's function loops included) without sharing one.

Script items are served first in, first out, one per `POST /v1/messages`:

- `turn`: an assistant Message, streamed as SSE when the request says `"stream": true`.
- `http_error`: that status with the API's error body; the SDK retries 408/409/429/5xx itself.
- `stream_error`: HTTP 200, part of a turn, then `event: error`. The SDK raises
  `anthropic.APIStatusError` with `status_code == 200` and does not retry it.
- `drop`: HTTP 200, N events, then the socket closes without the end of the chunked body. The
  SDK does not wrap what httpx2 raises while it reads a stream, so the caller sees
  `httpx2.RemoteProtocolError` ("peer closed connection without sending complete message
  body"), not an `anthropic.APIConnectionError`; the SDK does not retry it either. Against a
  non-streaming request the socket closes before any reply: `anthropic.APIConnectionError`,
  which the SDK does retry (each retry takes the next item).

`stream_error` against a non-streaming request becomes the HTTP error for its type (529 for
overloaded_error). Every Message carries the server's `model`, whatever the request asked for.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent.replay import sse

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"
REQUIRED_FIELDS = ("model", "max_tokens", "messages")

StopReason = Literal[
    "end_turn",
    "tool_use",
    "max_tokens",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
    "stop_sequence",
]

ERROR_TYPE_BY_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
STATUS_BY_ERROR_TYPE = {kind: status for status, kind in ERROR_TYPE_BY_STATUS.items()}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Usage(_Strict):
    input_tokens: int = 10
    output_tokens: int = 5
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class Turn(_Strict):
    """One assistant Message; `content` holds blocks in Messages API shape."""

    content: list[dict[str, Any]]
    stop_reason: StopReason = "end_turn"
    stop_sequence: str | None = None
    usage: Usage = Field(default_factory=Usage)

    @field_validator("content")
    @classmethod
    def _blocks_have_types(cls, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for number, block in enumerate(blocks, 1):
            if not isinstance(block.get("type"), str):
                raise ValueError(f"content block {number} has no 'type' (e.g. 'text', 'tool_use')")
        return blocks


class HttpError(_Strict):
    status: int = Field(ge=400, le=599)
    type: str | None = None
    message: str | None = None
    retry_after_ms: int | None = Field(default=None, ge=0)
    should_retry: bool | None = None


class StreamError(_Strict):
    type: str = "overloaded_error"
    message: str = "Overloaded"
    after_blocks: int = Field(default=0, ge=0)
    partial: Turn | None = None


class Drop(_Strict):
    after_events: int = Field(ge=0)
    partial: Turn | None = None


class TurnItem(_Strict):
    turn: Turn


class HttpErrorItem(_Strict):
    http_error: HttpError


class StreamErrorItem(_Strict):
    stream_error: StreamError


class DropItem(_Strict):
    drop: Drop


ScriptItem = TurnItem | HttpErrorItem | StreamErrorItem | DropItem
ITEM_MODELS: dict[str, type[ScriptItem]] = {
    "turn": TurnItem,
    "http_error": HttpErrorItem,
    "stream_error": StreamErrorItem,
    "drop": DropItem,
}
UNFINISHED_TURN = Turn(content=[{"type": "text", "text": "This answer is cut off before it ends."}])


def parse_script_item(raw: ScriptItem | dict[str, Any], position: int) -> ScriptItem:
    """Accept a model or a one-key dict; say which item is wrong and what it should look like."""
    if isinstance(raw, ScriptItem):
        return raw
    if not isinstance(raw, dict) or len(raw) != 1 or next(iter(raw)) not in ITEM_MODELS:
        shown = sorted(raw) if isinstance(raw, dict) else type(raw).__name__
        raise ValueError(
            f"replay script item {position} must be a dict with exactly one key out of "
            f"{', '.join(ITEM_MODELS)}; got {shown}"
        )
    kind = next(iter(raw))
    return ITEM_MODELS[kind].model_validate(raw)


def assistant_message(turn: Turn, message_id: str, model: str) -> dict[str, Any]:
    """The Message object the API returns (or streams piece by piece) for a scripted turn."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": turn.content,
        "stop_reason": turn.stop_reason,
        "stop_sequence": turn.stop_sequence,
        "usage": turn.usage.model_dump(),
    }


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it, and what it answered (`served`, e.g. 'turn')."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    served: str
    request_id: str


@dataclass(frozen=True)
class _ErrorReply:
    """An answer the server makes up itself (bad route, bad body, script exhausted)."""

    served: str
    status: int
    type: str
    message: str
    retry_after_ms: int | None = None
    should_retry: bool | None = None


class MessagesAPIServer:
    """Serves a script of assistant turns on 127.0.0.1 (port 0) from a background thread."""

    def __init__(
        self, script: Sequence[ScriptItem | dict[str, Any]], *, model: str = "claude-test"
    ):
        self.model = model
        self.requests: list[RecordedRequest] = []
        self._script = deque(parse_script_item(raw, n) for n, raw in enumerate(script, 1))
        self._script_length = len(self._script)
        self._lock = threading.Lock()
        self._serial = itertools.count(1)
        self._httpd: _ReplayHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("MessagesAPIServer is not running; call start() first")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> MessagesAPIServer:
        if self._httpd is None:
            self._httpd = _ReplayHTTPServer(("127.0.0.1", 0), _Handler, self)
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="messages-api-replay",
                daemon=True,
            )
            self._thread.start()
        return self

    def close(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
        self._httpd = self._thread = None

    def __enter__(self) -> MessagesAPIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def remaining(self) -> int:
        with self._lock:
            return len(self._script)

    def _take(
        self, method: str, path: str, headers: dict[str, str], body: Any
    ) -> tuple[ScriptItem | _ErrorReply | _Count, str]:
        """Decide the answer and record the request under one lock, so their orders agree."""
        with self._lock:
            answer = self._choose(method, path, body)
            if isinstance(answer, _ErrorReply | _Count):
                served = answer.served
            else:
                served = next(iter(type(answer).model_fields))
            request_id = f"req_replay{next(self._serial):06d}"
            self.requests.append(RecordedRequest(method, path, headers, body, served, request_id))
            return answer, request_id

    def _choose(self, method: str, path: str, body: Any) -> ScriptItem | _ErrorReply | _Count:
        if method != "POST" or path not in (MESSAGES_PATH, COUNT_TOKENS_PATH):
            return _ErrorReply(
                "not_found",
                404,
                "not_found_error",
                f"no route for {method} {path}; this replay server answers POST "
                f"{MESSAGES_PATH} and POST {COUNT_TOKENS_PATH}",
            )
        if not isinstance(body, dict):
            return _ErrorReply(
                "invalid_request", 400, "invalid_request_error", "request body is not a JSON object"
            )
        missing = [name for name in REQUIRED_FIELDS if name not in body and path == MESSAGES_PATH]
        if missing:
            return _ErrorReply(
                "invalid_request", 400, "invalid_request_error", f"{missing[0]}: Field required"
            )
        if path == COUNT_TOKENS_PATH:
            return _Count(max(1, len(json.dumps(body)) // 4))
        if not self._script:
            return _ErrorReply(
                "exhausted",
                400,
                "invalid_request_error",
                f"replay script exhausted after {self._script_length} turns",
            )
        return self._script.popleft()


@dataclass(frozen=True)
class _Count:
    input_tokens: int
    served: str = "count_tokens"


class _ReplayHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type, replay: MessagesAPIServer):
        self.replay = replay
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-answer is normal here; stay quiet instead of a traceback."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _ReplayHTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output clean; `MessagesAPIServer.requests` is the log."""

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        replay = self.server.replay
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        headers = {name.lower(): value for name, value in self.headers.items()}
        answer, request_id = replay._take(self.command, urlsplit(self.path).path, headers, body)
        message_id = request_id.replace("req_", "msg_", 1)
        streaming = isinstance(body, dict) and body.get("stream") is True
        try:
            self._answer(answer, streaming, request_id, message_id)
        except ConnectionError:
            self.close_connection = True

    def _answer(
        self,
        answer: ScriptItem | _ErrorReply | _Count,
        streaming: bool,
        request_id: str,
        message_id: str,
    ) -> None:
        replay = self.server.replay
        if isinstance(answer, _ErrorReply):
            self._send_error(answer, request_id)
        elif isinstance(answer, _Count):
            self._send_json(200, {"input_tokens": answer.input_tokens}, request_id)
        elif isinstance(answer, HttpErrorItem):
            spec = answer.http_error
            kind = spec.type or ERROR_TYPE_BY_STATUS.get(spec.status, "api_error")
            message = spec.message or kind.replace("_", " ").capitalize()
            reply = _ErrorReply(
                "http_error", spec.status, kind, message, spec.retry_after_ms, spec.should_retry
            )
            self._send_error(reply, request_id)
        elif isinstance(answer, TurnItem):
            message = assistant_message(answer.turn, message_id, replay.model)
            if streaming:
                self._send_events(sse.message_events(message), request_id, finish=True)
            else:
                self._send_json(200, message, request_id)
        elif isinstance(answer, StreamErrorItem):
            spec = answer.stream_error
            if not streaming:
                status = STATUS_BY_ERROR_TYPE.get(spec.type, 500)
                reply = _ErrorReply("stream_error", status, spec.type, spec.message)
                self._send_error(reply, request_id)
                return
            message = assistant_message(spec.partial or Turn(content=[]), message_id, replay.model)
            events = [*sse.opening_events(message, spec.after_blocks)]
            events.append(sse.error_event(spec.type, spec.message))
            self._send_events(events, request_id, finish=True)
        elif isinstance(answer, DropItem):
            self.close_connection = True
            if streaming:
                message = assistant_message(
                    answer.drop.partial or UNFINISHED_TURN, message_id, replay.model
                )
                events = itertools.islice(sse.message_events(message), answer.drop.after_events)
                self._send_events(events, request_id, finish=False)

    def _send_json(
        self,
        status: int,
        payload: dict[str, Any],
        request_id: str,
        extra: Iterable[tuple[str, str]] = (),
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", request_id)
        for name, value in extra:
            self.send_header(name, value)
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _send_error(self, reply: _ErrorReply, request_id: str) -> None:
        extra = []
        if reply.retry_after_ms is not None:
            extra.append(("retry-after-ms", str(reply.retry_after_ms)))
        if reply.should_retry is not None:
            extra.append(("x-should-retry", "true" if reply.should_retry else "false"))
        error = {"type": reply.type, "message": reply.message}
        body = {"type": "error", "error": error, "request_id": request_id}
        self._send_json(reply.status, body, request_id, extra)

    def _send_events(self, events: Iterable[dict[str, Any]], request_id: str, finish: bool) -> None:
        """Chunked SSE; without the final empty chunk the client sees a broken body, not an end."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", request_id)
        self.send_header("connection", "close")
        self.end_headers()
        for event in events:
            frame = sse.encode_event(event)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
        if finish:
            self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True
