"""A local stand-in for the Anthropic Messages API that answers from a script.

Tests and `scout demo` point the real `anthropic` SDK at it (`base_url=server.url`), so every
byte the SDK reads must look like the real API: SSE frames, JSON Messages, error bodies, retry
headers. It runs stdlib `ThreadingHTTPServer` in a daemon thread, so it serves any event loop
(pytest's function loops included) without sharing one.

Script items (agent/standin/script.py) are served first in, first out, one per
`POST /v1/messages`; wire formats and error bodies are in agent/standin/wire.py. Every Message
carries the server's `model`, whatever the request asked for.

It is strict: every request first passes agent/loop/request_rules.py, and a request the real API
would refuse is refused the same way (400 `invalid_request_error`, the API's message) without
taking a script item. Usage is counted from the request itself (agent/loop/token_estimate.py,
with the prompt cache the API describes) and marked as an estimate in a response header;
`POST /v1/messages/count_tokens` answers the same estimate.

`dialect="vllm"` answers as vLLM's Messages API does instead (agent/standin/vllm_wire.py for what it
sends, agent/standin/vllm_rules.py for what it refuses): its own request rules, no prompt cache,
usage without cache fields, its stream shapes and error bodies; `api_key`, `max_model_len` and
`tool_parser` stand for its `--api-key`, `--max-model-len` and `--tool-call-parser`.
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

from agent.loop.request_rules import check_request
from agent.loop.token_estimate import (
    USAGE_ESTIMATE_HEADER,
    PromptCacheModel,
    content_tokens,
    estimate_input_tokens,
)
from agent.standin import sse, vllm_rules, vllm_wire
from agent.standin.script import (
    UNFINISHED_TURN,
    DropItem,
    HttpErrorItem,
    ScriptItem,
    StreamErrorItem,
    Turn,
    TurnItem,
    parse_script_item,
)
from agent.standin.wire import (
    COUNT_TOKENS_PATH,
    ERROR_TYPE_BY_STATUS,
    MESSAGES_PATH,
    STATUS_BY_ERROR_TYPE,
    ErrorReply,
    assistant_message,
)


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it, and what it answered (`served`, e.g. 'turn')."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    served: str
    request_id: str


Dialect = Literal["anthropic", "vllm"]


class MessagesAPIServer:
    """Serves a script of assistant turns on 127.0.0.1 (port 0) from a background thread."""

    def __init__(
        self,
        script: Sequence[ScriptItem | dict[str, Any]],
        *,
        model: str = "claude-test",
        dialect: Dialect = "anthropic",
        api_key: str | None = None,
        max_model_len: int | None = None,
        tool_parser: bool = True,
    ):
        self.model = model
        self.dialect = dialect
        self._vllm = vllm_rules.ServeOptions(model, api_key, max_model_len, tool_parser)
        self.requests: list[RecordedRequest] = []
        self._script = deque(parse_script_item(raw, n) for n, raw in enumerate(script, 1))
        if dialect == "vllm":
            for item in self._script:
                if isinstance(item, TurnItem):
                    vllm_wire.message(item.turn, "", model, {})  # fails on what vLLM never sends
        self._script_length = len(self._script)
        self._lock = threading.Lock()
        self._serial = itertools.count(1)
        self._cache = PromptCacheModel()
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

    def _take(self, method: str, path: str, headers: dict[str, str], body: Any) -> _Served:
        """Decide the answer and record the request under one lock, so their orders agree."""
        with self._lock:
            answer = self._choose(method, path, headers, body)
            if isinstance(answer, ErrorReply | _Count):
                served = answer.served
            else:
                served = next(iter(type(answer).model_fields))
            request_id = f"req_replay{next(self._serial):06d}"
            self.requests.append(RecordedRequest(method, path, headers, body, served, request_id))
            usage = None
            if isinstance(answer, TurnItem) and answer.turn.usage is None:
                if self.dialect == "vllm":  # no prompt cache: the whole prompt is input
                    usage = {"input_tokens": estimate_input_tokens(body)}
                else:
                    usage = self._cache.usage(body)
                usage["output_tokens"] = content_tokens(answer.turn.content)
            return _Served(answer, request_id, usage)

    def _choose(
        self, method: str, path: str, headers: dict[str, str], body: Any
    ) -> ScriptItem | ErrorReply | _Count:
        if self.dialect == "vllm":
            refusal = vllm_rules.refuse(method, path, headers, body, self._vllm)
            if refusal is not None:
                return ErrorReply(refusal.served, refusal.status, "", "", payload=refusal.payload)
            return self._next_item(path, body)
        if method != "POST" or path not in (MESSAGES_PATH, COUNT_TOKENS_PATH):
            return ErrorReply(
                "not_found",
                404,
                "not_found_error",
                f"no route for {method} {path}; this replay server answers POST "
                f"{MESSAGES_PATH} and POST {COUNT_TOKENS_PATH}",
            )
        problem = check_request(body, counting=path == COUNT_TOKENS_PATH)
        if problem is not None:
            return ErrorReply("invalid_request", problem.status, problem.type, problem.message)
        return self._next_item(path, body)

    def _next_item(self, path: str, body: Any) -> ScriptItem | ErrorReply | _Count:
        if path == COUNT_TOKENS_PATH:
            return _Count(estimate_input_tokens(body))
        if not self._script:
            return ErrorReply(
                "exhausted",
                400,
                "invalid_request_error",
                f"replay script exhausted after {self._script_length} turns",
            )
        return self._script.popleft()


@dataclass(frozen=True)
class _Served:
    """What one request gets: the answer, its request id, and the usage counted for a turn."""

    answer: ScriptItem | ErrorReply | _Count
    request_id: str
    usage: dict[str, int] | None


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
        served = replay._take(self.command, urlsplit(self.path).path, headers, body)
        streaming = isinstance(body, dict) and body.get("stream") is True
        try:
            self._answer(served, streaming)
        except ConnectionError:
            self.close_connection = True

    def _answer(self, served: _Served, streaming: bool) -> None:
        replay = self.server.replay
        if replay.dialect == "vllm":
            self._answer_vllm(served, streaming)
            return
        answer, request_id = served.answer, served.request_id
        message_id = request_id.replace("req_", "msg_", 1)
        if isinstance(answer, ErrorReply):
            self._send_error(answer, request_id)
        elif isinstance(answer, _Count):
            payload = {"input_tokens": answer.input_tokens}
            self._send_json(200, payload, request_id, [USAGE_ESTIMATE_HEADER])
        elif isinstance(answer, HttpErrorItem):
            spec = answer.http_error
            kind = spec.type or ERROR_TYPE_BY_STATUS.get(spec.status, "api_error")
            message = spec.message or kind.replace("_", " ").capitalize()
            reply = ErrorReply(
                "http_error", spec.status, kind, message, spec.retry_after_ms, spec.should_retry
            )
            self._send_error(reply, request_id)
        elif isinstance(answer, TurnItem):
            message = assistant_message(answer.turn, message_id, replay.model, served.usage)
            extra = [USAGE_ESTIMATE_HEADER] if served.usage is not None else []
            if streaming:
                events = sse.message_events(message)
                self._send_events(events, request_id, finish=True, extra=extra)
            else:
                self._send_json(200, message, request_id, extra)
        elif isinstance(answer, StreamErrorItem):
            spec = answer.stream_error
            if not streaming:
                status = STATUS_BY_ERROR_TYPE.get(spec.type, 500)
                reply = ErrorReply("stream_error", status, spec.type, spec.message)
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

    def _answer_vllm(self, served: _Served, streaming: bool) -> None:
        """As vLLM answers: its Message and stream shapes, its errors, no request-id header."""
        replay, answer = self.server.replay, served.answer
        message_id = "chatcmpl-" + served.request_id.removeprefix("req_replay").rjust(32, "0")
        if isinstance(answer, ErrorReply):
            payload = answer.payload or vllm_wire.error_body(
                vllm_wire.error_type(answer.status), answer.message
            )
            self._send_json(answer.status, payload, None)
        elif isinstance(answer, _Count):
            self._send_json(200, vllm_wire.count_tokens_body(answer.input_tokens), None)
        elif isinstance(answer, HttpErrorItem):
            spec = answer.http_error
            kind = spec.type or vllm_wire.error_type(spec.status)
            body = vllm_wire.error_body(kind, spec.message or kind)
            self._send_json(spec.status, body, None)
        elif isinstance(answer, TurnItem):
            turn = answer.turn
            usage = vllm_wire.flatten_usage(turn.usage.model_dump()) if turn.usage else served.usage
            message = vllm_wire.message(turn, message_id, replay.model, usage or {})
            extra = [] if turn.usage else [USAGE_ESTIMATE_HEADER]  # the replay's own marker
            if streaming:
                self._send_events(vllm_wire.message_events(message), None, True, extra)
            else:
                self._send_json(200, message, None, extra)
        elif isinstance(answer, StreamErrorItem):
            spec = answer.stream_error
            if not streaming:
                self._send_json(500, vllm_wire.error_body("internal_error", spec.message), None)
                return
            partial = spec.partial or Turn(content=[])
            message = vllm_wire.message(partial, message_id, replay.model, {"input_tokens": 0})
            events = [*vllm_wire.opening_events(message, spec.after_blocks)]
            events.append(vllm_wire.error_event(spec.message))
            self._send_events(events, None, finish=True)
        elif isinstance(answer, DropItem):
            self.close_connection = True
            if streaming:
                partial = answer.drop.partial or UNFINISHED_TURN
                message = vllm_wire.message(partial, message_id, replay.model, {"input_tokens": 0})
                events = vllm_wire.message_events(message)
                self._send_events(itertools.islice(events, answer.drop.after_events), None, False)

    def _send_json(
        self,
        status: int,
        payload: dict[str, Any],
        request_id: str | None,
        extra: Iterable[tuple[str, str]] = (),
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        if request_id is not None:
            self.send_header("request-id", request_id)
        for name, value in extra:
            self.send_header(name, value)
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _send_error(self, reply: ErrorReply, request_id: str) -> None:
        self._send_json(reply.status, reply.body(request_id), request_id, reply.headers())

    def _send_events(
        self,
        events: Iterable[dict[str, Any]],
        request_id: str | None,
        finish: bool,
        extra: Iterable[tuple[str, str]] = (),
    ) -> None:
        """Chunked SSE; without the final empty chunk the client sees a broken body, not an end."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        if request_id is not None:
            self.send_header("request-id", request_id)
        for name, value in extra:
            self.send_header(name, value)
        self.send_header("connection", "close")
        self.end_headers()
        for event in events:
            frame = sse.encode_event(event)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
        if finish:
            self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True
