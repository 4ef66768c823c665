"""The replay server's script: what each `POST /v1/messages` answers, in order, as data.

- `turn`: an assistant Message, streamed as SSE when the request says `"stream": true`. Its
  usage is the server's estimate of the request it answers (agent/loop/token_estimate.py),
  unless the item scripts `usage` itself.
- `http_error`: that status with the API's error body; the SDK retries 408/409/429/5xx itself.
- `stream_error`: HTTP 200, part of a turn, then `event: error`. The SDK raises
  `anthropic.APIStatusError` with `status_code == 200` and does not retry it.
- `drop`: HTTP 200, N events, then the socket closes without the end of the chunked body. What
  the SDK raises for that broken read depends on its release (2.15: `httpx2.RemoteProtocolError`,
  2.17: `anthropic.APIConnectionError`, "incomplete chunked read"); neither retries it, and
  Scout's model client retries the turn (agent/loop/model_client.py). Against a non-streaming
  request the socket closes before any reply: `anthropic.APIConnectionError`, which the SDK does
  retry (each retry takes the next item).

`stream_error` against a non-streaming request becomes the HTTP error for its type (529 for
overloaded_error).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

StopReason = Literal[
    "end_turn",
    "tool_use",
    "max_tokens",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
    "stop_sequence",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Usage(_Strict):
    """Usage a test scripts on purpose; without it the server reports its estimate."""

    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class Turn(_Strict):
    """One assistant Message; `content` holds blocks in Messages API shape."""

    content: list[dict[str, Any]]
    stop_reason: StopReason = "end_turn"
    stop_sequence: str | None = None
    usage: Usage | None = None  # None: the server counts the request (an estimate)

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
