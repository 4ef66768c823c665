"""`AnthropicClient`: one assistant turn streamed through the real SDK (the turn's types and the
client protocol are in agent/loop/model_turn.py, so that only building this client imports it).

The SDK's own retries handle HTTP errors (429, 5xx, 529, connection failures before a response).
Errors that arrive inside an HTTP 200 stream (`overloaded_error`, `api_error`) and streams that drop
halfway are not retried by the SDK, so a turn is retried here with jittered backoff.

A dropped stream is known by where it broke, not by the exception's type: SDK releases differ in
what a broken read raises (2.15 lets `httpx2.RemoteProtocolError` through, 2.17 wraps it as
`anthropic.APIConnectionError`), so any connection error after the answer began is a drop.
"""

from __future__ import annotations

import os
from typing import Any

import anthropic
import httpx2
import structlog
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)
from tenacity.wait import wait_base

from agent.loop.model_turn import (
    AssistantTurn,
    ModelError,
    RetrySink,
    TextSink,
    TurnRequest,
    cached_request_params,
)
from agent.loop.token_estimate import USAGE_ESTIMATE_HEADER

log = structlog.get_logger(__name__)


def is_retryable_stream_error(exc: BaseException) -> bool:
    """Mid-stream API errors and dropped streams: what the SDK does not retry by itself."""
    if isinstance(exc, anthropic.APIStatusError) and exc.status_code == 200:
        body = exc.body if isinstance(exc.body, dict) else {}
        error = body.get("error") if isinstance(body.get("error"), dict) else body
        return error.get("type") in {"overloaded_error", "api_error"}
    return isinstance(exc, StreamDropped)


class StreamDropped(Exception):
    """The answer had begun (HTTP 200) and its stream broke or ended before `message_stop`."""


# What a broken read of a begun answer raises, in every SDK release the range allows.
_READ_FAILURES = (anthropic.APIConnectionError, httpx2.TransportError)


def explain_api_error(exc: BaseException) -> str:
    if isinstance(exc, anthropic.AuthenticationError):
        origin = _origin(exc.response.request.url)
        if origin != ANTHROPIC_ORIGIN:
            return (
                f"The model API at {origin} rejected the key (401). Set ANTHROPIC_API_KEY to the "
                "key that server was started with (vLLM: its --api-key), or run `scout doctor`."
            )
        return (
            "The Anthropic API rejected the API key (401). Set ANTHROPIC_API_KEY to a valid key "
            "or run `scout doctor`."
        )
    if isinstance(exc, anthropic.PermissionDeniedError):
        return f"The API key may not use this model or feature (403): {_api_message(exc)}"
    if isinstance(exc, anthropic.NotFoundError):
        return f"Not found (404): {_api_message(exc)}. Check the model name and ANTHROPIC_BASE_URL."
    if isinstance(exc, anthropic.RateLimitError):
        return "Rate limited (429) even after retries; wait a minute and try again."
    if isinstance(exc, anthropic.BadRequestError):
        message = _api_message(exc)
        if "--tool-call-parser" in message:  # vLLM serving the planner without tool calling
            return (
                f"The model server cannot call tools (400): {message}. Restart it with "
                "--enable-auto-tool-choice and the model's --tool-call-parser (its recipe names "
                "it)."
            )
        return f"The API refused the request (400): {message}"
    if isinstance(exc, anthropic.APIStatusError):
        return f"The API failed ({exc.status_code}): {_api_message(exc)}; try again shortly."
    if isinstance(exc, StreamDropped):
        return (
            "Lost the connection to the model API and retries did not help; check the network "
            "or ANTHROPIC_BASE_URL, then try again."
        )
    if isinstance(exc, anthropic.APIConnectionError):
        return (
            f"Could not reach the model API at {_origin(exc.request.url)} ({_root_cause(exc)}), "
            "even after retries; check the network or ANTHROPIC_BASE_URL, then try again."
        )
    return f"The model call failed: {type(exc).__name__}: {exc}"


ANTHROPIC_ORIGIN = "https://api.anthropic.com"


def _root_cause(exc: BaseException) -> str:
    """Why a connection failed, in the system's words (`connection refused`: nothing listens
    there; `name or service not known`: no such host), from the innermost cause."""
    seen: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and cause not in seen:
        seen.append(cause)
        if isinstance(cause, OSError) and (cause.errno or cause.strerror):
            said = os.strerror(cause.errno) if isinstance(cause.errno, int) else cause.strerror
            return str(said).lower()
        cause = cause.__cause__ or cause.__context__
    innermost = seen[-1]
    return str(innermost) or type(innermost).__name__


def _origin(url: httpx2.URL) -> str:
    return f"{url.scheme}://{url.netloc.decode()}"


# How servers say a prompt does not fit the context window. Anthropic: "prompt is too long: N
# tokens > M maximum"; vLLM: "This model's maximum context length is …" (older releases) or
# "… However, the model's context length is only N tokens, …" (newer ones).
_OVERFLOW_MARKS = ("prompt is too long", "context length is", "context length of")


def is_context_overflow(message: str) -> bool:
    """A 400 that compaction can cure: the prompt is over the model's context window."""
    lowered = message.lower()
    return any(mark in lowered for mark in _OVERFLOW_MARKS)


def retry_reason(exc: BaseException) -> str:
    """What went wrong in a turn that is about to be retried (the advice comes only if it fails)."""
    if isinstance(exc, StreamDropped):
        return "the connection to the model API dropped mid-answer"
    if isinstance(exc, anthropic.APIStatusError):
        return f"the API reported an error mid-answer: {_api_message(exc)}"
    return f"{type(exc).__name__}: {exc}"


def _api_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(getattr(exc, "message", exc))


class AnthropicClient:
    """Streams turns through `AsyncAnthropic.messages.stream`."""

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None = None,
        max_retries: int = 2,
        timeout_s: float = 600.0,
        turn_attempts: int = 3,
        retry_wait: wait_base | None = None,
    ) -> None:
        # A server of your own may need no key (vLLM started without --api-key): send no
        # Authorization then, rather than the SDK refusing to send at all (or reading one from
        # the environment that belongs to another endpoint).
        headers = {"Authorization": anthropic.omit} if api_key is None and base_url else None
        self._sdk = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout_s,
            default_headers=headers,
        )
        self._turn_attempts = turn_attempts
        self._retry_wait = retry_wait or wait_exponential_jitter(multiplier=0.5, max=8, jitter=1)

    async def close(self) -> None:
        await self._sdk.close()

    async def stream(
        self, request: TurnRequest, on_text: TextSink, on_retry: RetrySink | None = None
    ) -> AssistantTurn:
        def before_sleep(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            log.warning(
                "model.turn.retry",
                attempt=state.attempt_number,
                sleep_s=round(state.next_action.sleep, 2) if state.next_action else None,
                error=repr(exc),
            )
            if on_retry is not None:
                on_retry(state.attempt_number, retry_reason(exc) if exc else "")

        retrying = AsyncRetrying(
            retry=retry_if_exception(is_retryable_stream_error),
            wait=self._retry_wait,
            stop=stop_after_attempt(self._turn_attempts),
            before_sleep=before_sleep,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await self._stream_once(request, on_text)
        except Exception as exc:
            if isinstance(exc, (anthropic.AnthropicError, StreamDropped)):
                too_long = isinstance(exc, anthropic.BadRequestError) and is_context_overflow(
                    _api_message(exc)
                )
                kind = "prompt_too_long" if too_long else ""
                raise ModelError(explain_api_error(exc), kind) from exc
            raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _stream_once(self, request: TurnRequest, on_text: TextSink) -> AssistantTurn:
        params = cached_request_params(request)
        async with self._sdk.messages.stream(**params) as stream:
            stopped = False
            try:
                async for event in stream:
                    if event.type == "text":
                        on_text(event.text)
                    elif event.type == "message_stop":
                        stopped = True
            except _READ_FAILURES as exc:
                raise StreamDropped(f"{type(exc).__name__}: {exc}") from exc
            if not stopped:
                raise StreamDropped("the stream ended before message_stop")
            message = await stream.get_final_message()
            request_id = stream.request_id
            name, value = USAGE_ESTIMATE_HEADER
            estimated = stream.response.headers.get(name) == value
        return AssistantTurn(
            content=[block.model_dump(mode="json", exclude_none=True) for block in message.content],
            stop_reason=message.stop_reason,
            usage=message.usage.model_dump(mode="json", exclude_none=True),
            model=message.model,
            request_id=request_id,
            usage_source="estimate" if estimated else "api",
        )
