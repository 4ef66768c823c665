"""The Messages API as it looks on the wire: routes, Message objects and error bodies.

What the replay server sends must read, byte for byte, like the real API to the real SDK.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent.standin.script import Turn

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"

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


def assistant_message(
    turn: Turn, message_id: str, model: str, usage: dict[str, int] | None = None
) -> dict[str, Any]:
    """The Message object the API returns (or streams piece by piece) for a scripted turn.

    `usage` is what the server counted; a turn that scripts its own usage keeps that.
    """
    if turn.usage is not None:
        usage = turn.usage.model_dump()
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": turn.content,
        "stop_reason": turn.stop_reason,
        "stop_sequence": turn.stop_sequence,
        "usage": usage or {"input_tokens": 0, "output_tokens": 0},
    }


@dataclass(frozen=True)
class ErrorReply:
    """An error answer: scripted (`http_error`) or made up (bad route or body, script exhausted)."""

    served: str
    status: int
    type: str
    message: str
    retry_after_ms: int | None = None
    should_retry: bool | None = None
    payload: dict[str, Any] | None = None  # another server's body, sent as it is

    def body(self, request_id: str) -> dict[str, Any]:
        """The API's error body: `{"type": "error", "error": {type, message}, "request_id"}`."""
        if self.payload is not None:
            return self.payload
        error = {"type": self.type, "message": self.message}
        return {"type": "error", "error": error, "request_id": request_id}

    def headers(self) -> list[tuple[str, str]]:
        """The retry hints the SDK reads: `retry-after-ms` and `x-should-retry`."""
        extra = []
        if self.retry_after_ms is not None:
            extra.append(("retry-after-ms", str(self.retry_after_ms)))
        if self.should_retry is not None:
            extra.append(("x-should-retry", "true" if self.should_retry else "false"))
        return extra
