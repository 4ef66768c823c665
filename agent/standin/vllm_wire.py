"""What vLLM's Messages API sends, so the replay server can answer as a self-hosted planner does.

Read in vLLM's source (github.com/vllm-project/vllm, `vllm/entrypoints/anthropic/serving.py` at
commit 0001948bc769, `protocol.py` at 00589e563e77, `api_router.py` at 01540b75e3b1). vLLM
translates the request to a chat completion and the chunks back, and where that differs from
Anthropic's API a client sees it:

- stop reasons come from the chat `finish_reason` through `stop_reason_map`: only `end_turn`
  (stop, a stop sequence included: `stop_sequence` is never set), `max_tokens` and `tool_use`;
- usage carries `input_tokens` and `output_tokens` only: no prompt cache, `cache_control` is
  ignored (pydantic drops unknown fields);
- the stream has no `ping`; `message_start`'s message is dumped `exclude_unset`, so it has no
  `type` or `role`, its id is the chat completion's (`chatcmpl-…`) and its usage the first
  chunk's prompt tokens; `message_delta` says only `stop_reason` and repeats both counts;
- a tool call opens `content_block_start` `{type: tool_use, id, name, input: {}}`, then its
  arguments come as the tool parser emits them, as `input_json_delta` (never an empty one);
- thinking blocks are signed with a fresh uuid at their end (`signature_delta`);
- a failure inside the stream is `event: error` with type `internal_error`; no `request-id`
  header, no retry hints.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from agent.standin import sse
from agent.standin.script import Turn

# finish_reason -> stop_reason, as vLLM maps them; what a scripted turn's reason becomes.
STOP_REASONS = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "max_tokens": "max_tokens",
    "tool_use": "tool_use",
}

# What vLLM's own errors are called (`create_error_response` err_type) by HTTP status.
ERROR_TYPE_BY_STATUS = {
    400: "BadRequestError",
    404: "NotFoundError",
    500: "InternalServerError",
    501: "NotImplementedError",
    503: "ServiceUnavailableError",
}


def error_type(status: int) -> str:
    return ERROR_TYPE_BY_STATUS.get(status, "InternalServerError")


def stop_reason(turn: Turn) -> str:
    """The stop reason vLLM reports for what the scripted turn did; fail on one it never sends."""
    reason = STOP_REASONS.get(turn.stop_reason)
    if reason is None:
        raise ValueError(
            f"vLLM never answers stop_reason {turn.stop_reason!r}; it sends only "
            f"{', '.join(sorted(set(STOP_REASONS.values())))}"
        )
    return reason


def vllm_usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {"input_tokens": input_tokens, "output_tokens": output_tokens}


def flatten_usage(usage: dict[str, int]) -> dict[str, int]:
    """A scripted usage as vLLM reports it: every prompt token is input, nothing cached."""
    parts = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    return vllm_usage(sum(usage.get(part, 0) for part in parts), usage.get("output_tokens", 0))


def _block(block: dict[str, Any]) -> dict[str, Any]:
    """A content block as vLLM builds it: only the fields its model has, None dropped."""
    kind = block["type"]
    if kind == "tool_use":
        return {"type": kind, "id": block["id"], "name": block["name"], "input": block["input"]}
    if kind == "thinking":
        return {"type": kind, "thinking": block.get("thinking", ""), "signature": _signature()}
    if kind == "text":
        return {"type": kind, "text": block.get("text", "")}
    raise ValueError(f"vLLM never answers a {kind!r} block; it sends text, thinking and tool_use")


def _signature() -> str:
    return uuid.uuid4().hex


def message(turn: Turn, message_id: str, model: str, usage: dict[str, int]) -> dict[str, Any]:
    """The non-streaming reply: `model_dump(exclude_none=True)`, so no `stop_sequence`."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": [_block(block) for block in turn.content],
        "model": model,
        "stop_reason": stop_reason(turn),
        "usage": usage,
    }


def message_start(reply: dict[str, Any]) -> dict[str, Any]:
    opening = {
        "id": reply["id"],
        "content": [],
        "model": reply["model"],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": vllm_usage(reply["usage"]["input_tokens"], 0),
    }
    return {"type": "message_start", "message": opening}


def block_events(index: int, block: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """start, deltas and stop for one block, in the shapes vLLM's stream converter writes."""
    kind = block["type"]
    if kind == "tool_use":
        start = {"type": kind, "id": block["id"], "name": block["name"], "input": {}}
        pieces = [piece for piece in sse.split_json(block["input"]) if piece]
        deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in pieces]
    elif kind == "thinking":
        start = {"type": kind, "thinking": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": piece}
            for piece in sse.split_text(block["thinking"])
        ]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    else:
        start = {"type": kind, "text": ""}
        deltas = [{"type": "text_delta", "text": piece} for piece in sse.split_text(block["text"])]
    yield {"type": "content_block_start", "content_block": start, "index": index}
    for delta in deltas:
        yield {"type": "content_block_delta", "delta": delta, "index": index}
    yield {"type": "content_block_stop", "index": index}


def opening_events(reply: dict[str, Any], blocks: int) -> Iterator[dict[str, Any]]:
    """message_start (no ping follows in vLLM), then the first `blocks` blocks complete."""
    yield message_start(reply)
    for index, block in enumerate(reply["content"][:blocks]):
        yield from block_events(index, block)


def message_events(reply: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from opening_events(reply, len(reply["content"]))
    delta = {"stop_reason": reply["stop_reason"]}
    yield {"type": "message_delta", "delta": delta, "usage": dict(reply["usage"])}
    yield {"type": "message_stop"}


def error_event(message_text: str) -> dict[str, Any]:
    """vLLM's in-stream failure: always `internal_error`, whatever went wrong."""
    return {"type": "error", "error": {"type": "internal_error", "message": message_text}}


def error_body(error_type: str, message_text: str) -> dict[str, Any]:
    """`translate_error_response`: the Messages-API shape, without a `request_id`."""
    return {"type": "error", "error": {"type": error_type, "message": message_text}}


def count_tokens_body(tokens: int) -> dict[str, Any]:
    return {"input_tokens": tokens, "context_management": {"original_input_tokens": tokens}}
