"""Turn a finished assistant Message into the Server-Sent Events the Messages API streams.

The real API never sends a block whole: text grows through `text_delta` pieces and tool input
through `input_json_delta` fragments, so a replay must cut them up the same way or the SDK's
accumulator (and our own streaming face) is never exercised.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

PIECES_PER_BLOCK = 3


def encode_event(event: dict[str, Any]) -> bytes:
    """One SSE frame; the `event:` line is required, the SDK drops frames without it."""
    data = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
    return f"event: {event['type']}\ndata: {data}\n\n".encode()


def split_text(text: str, pieces: int = PIECES_PER_BLOCK) -> list[str]:
    """Cut `text` into up to `pieces` non-empty parts at word boundaries (keeping the spaces)."""
    words = text.split(" ")
    if len(words) < 2:
        return [text] if text else []
    per_piece = -(-len(words) // pieces)
    groups = [words[i : i + per_piece] for i in range(0, len(words), per_piece)]
    parts = [" ".join(group) for group in groups]
    return [part + " " for part in parts[:-1]] + [parts[-1]]


def split_json(value: Any, pieces: int = PIECES_PER_BLOCK) -> list[str]:
    """Serialise `value` into fragments, led by an empty one as the real API often sends."""
    text = json.dumps(value, ensure_ascii=False)
    size = max(1, -(-len(text) // pieces))
    return ["", *(text[i : i + size] for i in range(0, len(text), size))]


def message_start(message: dict[str, Any]) -> dict[str, Any]:
    """The opening event: the full Message, but empty, unfinished, and with almost no output yet."""
    usage = dict(message["usage"])
    usage["output_tokens"] = min(1, usage.get("output_tokens", 0))
    opening = {**message, "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
    return {"type": "message_start", "message": opening}


def block_events(index: int, block: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """start, deltas and stop for one content block, in the shapes the API uses for its type."""
    kind = block["type"]
    if kind == "text":
        start = {**block, "text": ""}
        deltas = [{"type": "text_delta", "text": piece} for piece in split_text(block["text"])]
    elif kind == "tool_use":
        start = {**block, "input": {}}
        deltas = [
            {"type": "input_json_delta", "partial_json": piece}
            for piece in split_json(block.get("input", {}))
        ]
    elif kind == "thinking":
        start = {**block, "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": piece}
            for piece in split_text(block.get("thinking", ""))
        ]
        deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
    else:
        start, deltas = block, []
    yield {"type": "content_block_start", "index": index, "content_block": start}
    for delta in deltas:
        yield {"type": "content_block_delta", "index": index, "delta": delta}
    yield {"type": "content_block_stop", "index": index}


def opening_events(message: dict[str, Any], blocks: int) -> Iterator[dict[str, Any]]:
    """message_start, a ping, then the first `blocks` content blocks complete."""
    yield message_start(message)
    yield {"type": "ping"}
    for index, block in enumerate(message["content"][:blocks]):
        yield from block_events(index, block)


def message_events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every event of a successful stream, ending with message_delta and message_stop."""
    yield from opening_events(message, len(message["content"]))
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]}
    yield {"type": "message_delta", "delta": delta, "usage": dict(message["usage"])}
    yield {"type": "message_stop"}


def error_event(error_type: str, message: str) -> dict[str, Any]:
    """The in-stream failure frame; the SDK raises APIStatusError(status_code=200) on it."""
    return {"type": "error", "error": {"type": error_type, "message": message}}
