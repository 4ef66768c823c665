"""Scout's side of the webhook's deferred path: a tiny HTTP/1.1 listener for signed callbacks.

A receiver that answered 202 POSTs its decision to `/scout/approvals/<request id>` later. Only a
correctly signed, fresh, never-seen callback for a step Scout is still waiting on, carrying that
step's id and fingerprint, resolves the wait; everything else is answered with an error status,
logged, and noted on the pending step so a later timeout can say what was rejected. A signed
callback is used up only when it is taken as the decision: one posted for an unknown step, or
one that answers another step, leaves the genuine delivery still usable. Lines are capped
(MAX_LINE_BYTES; a longer one gets 431) and so is the body.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

import structlog

from agent.safety.approvals import ApprovalRequest, Decision
from agent.safety.approvers.signing import DeliveryVerifier, ReplayedDelivery, SignatureError
from agent.safety.approvers.webhook_protocol import (
    CALLBACK_PATH_PREFIX,
    MAX_ANSWER_BYTES,
    AnswerRejected,
    decision_from_body,
)

log = structlog.get_logger(__name__)

MAX_BODY_BYTES = MAX_ANSWER_BYTES
MAX_LINE_BYTES = 16 * 1024
MAX_HEADER_LINES = 100
READ_TIMEOUT_S = 10.0
LINGER_S = 1.0
LINGER_READS = 64
REASONS = {
    204: "No Content",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    409: "Conflict",
    413: "Content Too Large",
    414: "URI Too Long",
    422: "Unprocessable Content",
    431: "Request Header Fields Too Large",
}


@dataclass
class PendingDecision:
    """One step waiting for a callback, and what was turned away while it waited."""

    request: ApprovalRequest
    future: asyncio.Future[Decision]
    rejections: list[str] = field(default_factory=list)

    def reject(self, problem: str, *, source: str) -> None:
        self.rejections.append(problem)
        log.warning(
            "approval answer rejected", request_id=self.request.id, source=source, problem=problem
        )


class _BadRequest(Exception):
    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


class CallbackListener:
    """Serves callback POSTs on `host:port` (port 0 picks a free one) until closed."""

    def __init__(self, verifier: DeliveryVerifier, host: str = "127.0.0.1", port: int = 0) -> None:
        self._verifier = verifier
        self._host = host
        self._port = port
        self._server: asyncio.Server | None = None
        self._pending: dict[str, PendingDecision] = {}

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("callback listener is not started")
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"http://{host}:{self._port}"

    async def start(self) -> None:
        if self._server is not None:
            return
        self._server = await asyncio.start_server(
            self._serve, self._host, self._port, limit=MAX_LINE_BYTES
        )
        self._port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is None:
            return
        self._server.close()
        await self._server.wait_closed()
        self._server = None

    def expect(self, request: ApprovalRequest) -> PendingDecision:
        """Start waiting for a callback about `request` (one wait per request id at a time)."""
        pending = PendingDecision(request, asyncio.get_running_loop().create_future())
        self._pending[request.id] = pending
        return pending

    def forget(self, pending: PendingDecision) -> None:
        if self._pending.get(pending.request.id) is pending:
            del self._pending[pending.request.id]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(READ_TIMEOUT_S):
                method, path, headers, body = await _read_request(reader)
            status, text = self._answer(method, path, headers, body)
        except _BadRequest as exc:
            status, text = exc.status, exc.text
        except TimeoutError:
            status, text = 408, "request not received in time"
        except (ConnectionError, asyncio.IncompleteReadError):
            writer.close()
            return
        with contextlib.suppress(ConnectionError, TimeoutError):
            writer.write(_response(status, text))
            await writer.drain()
            if status >= 400:
                await _discard_unread(reader, writer)
            writer.close()
            await writer.wait_closed()

    def _answer(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, str]:
        if not path.startswith(CALLBACK_PATH_PREFIX):
            return 404, "not an approval callback path"
        if method != "POST":
            return 405, "use POST"
        request_id = unquote(path.removeprefix(CALLBACK_PATH_PREFIX))
        pending = self._pending.get(request_id)
        if pending is None or pending.future.done():
            log.warning("approval callback for no waiting step", request_id=request_id)
            return 404, f"no step is waiting for a decision on {request_id!r}"
        try:
            delivery = self._verifier.check(headers, body)
            decision = decision_from_body(body, pending.request, source="callback")
            self._verifier.accept(delivery)
        except ReplayedDelivery as exc:
            pending.reject(str(exc), source="callback")
            return 409, str(exc)
        except SignatureError as exc:
            pending.reject(str(exc), source="callback")
            return 401, str(exc)
        except AnswerRejected as exc:
            pending.reject(str(exc), source="callback")
            return 422, str(exc)
        pending.future.set_result(decision)
        return 204, ""


async def _discard_unread(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Let a refused client read its answer: stop writing, then drop (a bounded amount of) what
    it is still sending, since closing on unread data resets the connection and loses it."""
    writer.write_eof()
    async with asyncio.timeout(LINGER_S):
        for _ in range(LINGER_READS):
            if not await reader.read(MAX_LINE_BYTES):
                return


async def _read_line(reader: asyncio.StreamReader, status: int, what: str) -> str:
    """One line, or _BadRequest(`status`) when it runs past MAX_LINE_BYTES."""
    try:
        return (await reader.readline()).decode("latin-1")
    except ValueError:  # asyncio's "separator is not found, and chunk exceed the limit"
        raise _BadRequest(status, f"{what} longer than {MAX_LINE_BYTES} bytes") from None


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes]:
    request_line = (await _read_line(reader, 414, "request line")).strip()
    parts = request_line.split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _BadRequest(400, "malformed request line")
    method, target, _version = parts
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADER_LINES):
        line = await _read_line(reader, 431, "header line")
        if line in ("\r\n", "\n", ""):
            break
        name, sep, value = line.partition(":")
        if not sep:
            raise _BadRequest(400, "malformed header line")
        headers[name.strip().lower()] = value.strip()
    else:
        raise _BadRequest(400, "too many header lines")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise _BadRequest(400, "send a Content-Length body, not chunked")
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise _BadRequest(400, "malformed Content-Length") from None
    if length < 0 or length > MAX_BODY_BYTES:
        raise _BadRequest(413, f"body must be 0..{MAX_BODY_BYTES} bytes")
    body = await reader.readexactly(length)
    return method.upper(), urlsplit(target).path, headers, body


def _response(status: int, text: str) -> bytes:
    payload = b"" if status == 204 else text.encode()
    head = (
        f"HTTP/1.1 {status} {REASONS.get(status, 'Unknown')}\r\n"
        f"Content-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(payload)}\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode() + payload
