"""The headless approver: asks a signed HTTP webhook, and fails closed when it cannot get an answer.

One request per step, POSTed as JSON and signed with the shared secret. The receiver answers in
the response body (200), or says "later" (202) and either POSTs a signed callback to Scout's
listener or gives a `decision_url` to poll (only in a signed 202, and only on the webhook's own
origin: polls carry signed headers and the request id). Only a verified answer carrying the
step's id and fingerprint counts; anything else is logged and never taken as a decision. Answers
are read uncompressed, up to MAX_ANSWER_BYTES and within BODY_READ_TIMEOUT_S of their headers,
before any signature is checked. No answer before the deadline is `timed_out`, an unreachable
webhook is `unavailable`: both deny, neither raises.

The secret must be long (signing.MIN_SECRET_CHARS), and the URL https unless it is loopback:
plain http to another host is refused unless the operator opts in (`allow_insecure_http`),
which logs a warning.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

import httpx
import structlog

from agent.safety.approvals import ApprovalRequest, Decision
from agent.safety.approvers.callback_listener import CallbackListener, PendingDecision
from agent.safety.approvers.signing import (
    DeliveryVerifier,
    SignatureError,
    check_secret,
    signed_headers,
)
from agent.safety.approvers.webhook_protocol import (
    CALLBACK_PATH_PREFIX,
    MAX_ANSWER_BYTES,
    AnswerRejected,
    decision_from_body,
    request_payload,
    strict_json,
)

log = structlog.get_logger(__name__)

CONNECT_TIMEOUT_S = 5.0
BODY_READ_TIMEOUT_S = 10.0
FAIL_CLOSED = "denied — nothing runs without an approval"


def insecure_http_problem(url: str) -> str | None:
    """Why `url` would send approvals in clear text over a network, or None when it would not
    (https, or http to this machine's loopback)."""
    parts = urlsplit(url)
    if parts.scheme != "http" or _is_loopback(parts.hostname or ""):
        return None
    return (
        f"the approval webhook {_where(url)} uses plain http: anyone on the path can read every "
        "request and delay or drop answers; use https"
    )


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _BadAnswer(Exception):
    """A webhook reply that was not read: too large, too slow, or compressed."""


class WebhookApprover:
    """Approver that routes each request to an HTTP webhook (`async with` runs its listener).

    `callback_public_url` is the base URL the receiver should call back on when it cannot reach
    `callback_host:port` directly (Scout behind NAT or a proxy); by default the listener's own.
    """

    def __init__(
        self,
        url: str,
        secret: str,
        *,
        timeout_s: float = 300,
        poll_interval_s: float = 2,
        callback_host: str = "127.0.0.1",
        callback_port: int = 0,
        callback_public_url: str | None = None,
        allow_insecure_http: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        check_secret(secret)
        if urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"approval webhook URL must be http(s)://…, got {_where(url)!r}")
        insecure = insecure_http_problem(url)
        if insecure and not allow_insecure_http:
            raise ValueError(
                f"{insecure} (or, on a network you trust, allow plain http explicitly)"
            )
        if insecure:
            log.warning("approval webhook over plain http", problem=insecure)
        self._url = url
        self._secret = secret.encode()
        self._timeout_s = timeout_s
        self._poll_interval_s = poll_interval_s
        self._clock = clock
        self._verifier = DeliveryVerifier(self._secret, clock=clock)
        self._listener = CallbackListener(self._verifier, callback_host, callback_port)
        self._public_url = callback_public_url.rstrip("/") if callback_public_url else None
        self._client: httpx.AsyncClient | None = None

    def __repr__(self) -> str:
        return f"WebhookApprover(url={_where(self._url)!r}, timeout_s={self._timeout_s:g})"

    async def start(self) -> None:
        """Open the callback listener and the HTTP client; `decide` calls it when needed."""
        await self._listener.start()
        if self._client is None:
            self._client = httpx.AsyncClient(
                trust_env=False,
                follow_redirects=False,
                timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT_S),
                headers={"User-Agent": "scout-approvals/1", "Accept-Encoding": "identity"},
            )

    async def close(self) -> None:
        await self._listener.close()
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> WebhookApprover:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def callback_url(self, request_id: str) -> str:
        base = self._public_url or self._listener.base_url
        return base + CALLBACK_PATH_PREFIX + quote(request_id, safe="")

    async def decide(self, request: ApprovalRequest) -> Decision:
        try:
            await self.start()
        except OSError as exc:
            return self._unavailable(
                request, f"cannot open the approval callback listener ({exc.strerror or exc})"
            )
        pending = self._listener.expect(request)
        try:
            async with asyncio.timeout(self._timeout_s):
                return await self._ask(pending)
        except TimeoutError:
            return self._timed_out(pending)
        finally:
            self._listener.forget(pending)

    async def _ask(self, pending: PendingDecision) -> Decision:
        request = pending.request
        now = self._clock()
        payload = request_payload(
            request,
            expires_at=now + self._timeout_s,
            callback_url=self.callback_url(request.id),
        )
        body = json.dumps(payload, separators=(",", ":")).encode()
        headers = signed_headers(self._secret, body, int(now), delivery=request.id)
        headers["Content-Type"] = "application/json"
        try:
            response, answer = await self._exchange("POST", self._url, body, headers)
        except httpx.HTTPError as exc:
            return self._unavailable(request, f"approval webhook unreachable ({self._why(exc)})")
        except _BadAnswer as exc:
            pending.reject(str(exc), source="response")
            return self._unavailable(request, f"approval webhook answer rejected ({exc})")
        status = response.status_code
        if status == 200:
            return self._answer_from_response(pending, response, answer)
        if status == 202:
            return await self._wait_for_later(pending, response, answer)
        if status >= 500:
            return self._unavailable(request, f"approval webhook unreachable (HTTP {status})")
        return self._unavailable(
            request,
            f"approval webhook refused the request (HTTP {status}: {_snippet(response, answer)})",
        )

    async def _exchange(
        self, method: str, url: str, body: bytes, headers: dict[str, str]
    ) -> tuple[httpx.Response, bytes]:
        """Send one request; the response and at most MAX_ANSWER_BYTES of its body, read within
        BODY_READ_TIMEOUT_S once the headers are in (the headers may take as long as a human
        needs). Raises httpx.HTTPError, or _BadAnswer for a body that is not read."""
        request = self._http.build_request(method, url, content=body, headers=headers)
        response = await self._http.send(request, stream=True)
        try:
            coding = response.headers.get("content-encoding", "identity").strip().lower()
            if coding not in ("", "identity"):
                raise _BadAnswer(f"the answer is compressed ({coding}); answer uncompressed")
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > MAX_ANSWER_BYTES:
                raise _BadAnswer(f"the answer is over {MAX_ANSWER_BYTES} bytes ({declared})")
            received = bytearray()
            try:
                async with asyncio.timeout(BODY_READ_TIMEOUT_S):
                    async for chunk in response.aiter_raw():
                        received += chunk
                        if len(received) > MAX_ANSWER_BYTES:
                            raise _BadAnswer(f"the answer is over {MAX_ANSWER_BYTES} bytes")
            except TimeoutError:
                raise _BadAnswer(
                    f"the answer's body did not arrive within {BODY_READ_TIMEOUT_S:g} s"
                ) from None
            return response, bytes(received)
        finally:
            await response.aclose()

    def _answer_from_response(
        self, pending: PendingDecision, response: httpx.Response, answer: bytes
    ) -> Decision:
        try:
            return self._verified(pending.request, response, answer, source="response")
        except (SignatureError, AnswerRejected) as exc:
            pending.reject(str(exc), source="response")
            return self._unavailable(pending.request, f"approval webhook answer rejected ({exc})")

    async def _wait_for_later(
        self, pending: PendingDecision, response: httpx.Response, answer: bytes
    ) -> Decision:
        decision_url = self._decision_url(pending, response, answer)
        if decision_url is None:
            return await pending.future
        poll = asyncio.ensure_future(self._poll(pending, decision_url))
        try:
            done, _ = await asyncio.wait(
                {poll, pending.future}, return_when=asyncio.FIRST_COMPLETED
            )
            return done.pop().result()
        finally:
            poll.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await poll

    async def _poll(self, pending: PendingDecision, decision_url: str) -> Decision:
        """GET `decision_url` until a verified decision arrives; 202/204 mean "not yet"."""
        while True:
            await asyncio.sleep(self._poll_interval_s)
            headers = signed_headers(
                self._secret, b"", int(self._clock()), delivery=pending.request.id
            )
            try:
                response, answer = await self._exchange("GET", decision_url, b"", headers)
            except httpx.HTTPError as exc:
                pending.reject(f"poll failed ({self._why(exc)})", source="poll")
                continue
            except _BadAnswer as exc:
                pending.reject(str(exc), source="poll")
                continue
            if response.status_code in (202, 204):
                continue
            if response.status_code != 200:
                pending.reject(f"poll answered HTTP {response.status_code}", source="poll")
                continue
            try:
                return self._verified(pending.request, response, answer, source="polled answer")
            except (SignatureError, AnswerRejected) as exc:
                pending.reject(str(exc), source="poll")

    def _verified(
        self, request: ApprovalRequest, response: httpx.Response, answer: bytes, *, source: str
    ) -> Decision:
        delivery = self._verifier.check(response.headers, answer)
        decision = decision_from_body(answer, request, source=source)
        self._verifier.accept(delivery)
        return decision

    def _decision_url(
        self, pending: PendingDecision, response: httpx.Response, answer: bytes
    ) -> str | None:
        """The 202's `decision_url` (relative ones resolve against the webhook's URL), when the
        202 is signed and the URL is on the webhook's own origin; else None (wait for a
        callback), with the reason noted."""
        try:
            body: Any = strict_json(answer or b"{}", "the 202 answer")
        except AnswerRejected as exc:
            pending.reject(str(exc), source="response")
            return None
        target = body.get("decision_url") if isinstance(body, dict) else None
        if not isinstance(target, str) or not target:
            return None
        try:
            self._verifier.accept(self._verifier.check(response.headers, answer))
        except SignatureError as exc:
            pending.reject(
                f"decision_url ignored: the 202 answer is not trusted ({exc})", source="response"
            )
            return None
        resolved = urljoin(self._url, target)
        if _origin(resolved) != _origin(self._url):
            pending.reject(
                f"decision_url ignored: {_where(resolved)} is not the webhook's own origin "
                f"{_where(self._url)}",
                source="response",
            )
            return None
        return resolved

    @property
    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            raise RuntimeError("WebhookApprover is closed; use `async with` or call start()")
        return self._client

    def _timed_out(self, pending: PendingDecision) -> Decision:
        message = f"no decision from the webhook within {self._timeout_s:g} s; denied"
        if pending.rejections:
            message += f" (rejected while waiting: {pending.rejections[-1]})"
        log.warning("approval timed out", request_id=pending.request.id, timeout_s=self._timeout_s)
        return Decision(
            kind="timed_out",
            fingerprint=pending.request.fingerprint,
            message=message,
            decided_by="webhook",
        )

    def _unavailable(self, request: ApprovalRequest, problem: str) -> Decision:
        log.warning("approval webhook unavailable", request_id=request.id, problem=problem)
        return Decision(
            kind="unavailable",
            fingerprint=request.fingerprint,
            message=f"{problem}; {FAIL_CLOSED}",
            decided_by="webhook",
        )

    def _why(self, exc: httpx.HTTPError) -> str:
        """Describe a transport failure by host and port only (URLs may embed tokens)."""
        where = _where(self._url)
        if isinstance(exc, httpx.ConnectTimeout):
            return f"no connection to {where} within {CONNECT_TIMEOUT_S:g} s"
        if isinstance(exc, httpx.ConnectError):
            return f"cannot connect to {where}: {exc or 'connection failed'}"
        return f"{type(exc).__name__} talking to {where}"


def _where(url: str) -> str:
    """`host:port` of a URL, without any user, path or query that might carry a token."""
    parts = urlsplit(url)
    if parts.hostname is None:
        return "(no host)"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.hostname}:{port}"


def _origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL; ports default by scheme."""
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        port = -1
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def _snippet(response: httpx.Response, answer: bytes) -> str:
    text = " ".join(answer.decode("utf-8", errors="replace").split())
    return text[:200] or response.reason_phrase
