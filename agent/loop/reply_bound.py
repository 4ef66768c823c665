"""A model reply cut to what one transcript line holds, before anything records or runs it.

The whole reply is recorded as one `model_response` line, and the reader skips a line over
transcript.MAX_LINE_BYTES, so a reply that would not fit is bounded here first, measured as the
writer serialises it (redacted, UTF-8, JSON escaping included): the largest tool_use inputs
become the history's size note first, then the longest text blocks are cut with a note, and a
block still too large (a huge tool name, an unknown block type) becomes a note itself. The
session acts on the bounded reply and a replay reads the same one from the transcript, so both
run the same calls: a call whose input became a note is refused by the executor before it is
validated (history.is_omitted_input): nothing runs, the model is told.

MAX_REPLY_BYTES is half a line: room for the event's envelope, and for the `tool_call` and
`approval_request` events, which carry one of these inputs again with a little more.
"""

from __future__ import annotations

import dataclasses
import heapq
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent.loop import history
from agent.loop.events import Notice
from agent.loop.model_turn import AssistantTurn
from agent.loop.recorder import Recorder
from agent.loop.transcript import MAX_LINE_BYTES

MAX_REPLY_BYTES = MAX_LINE_BYTES // 2
Block = dict[str, Any]
Redact = Callable[[Any], Any]  # the transcript's masking of secrets (Redaction.data)


def line_bytes(value: Any) -> int:
    """How many bytes `value` takes in a transcript line (transcript.TranscriptWriter)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


@dataclass
class BoundedReply:
    content: list[Block]
    omitted_inputs: list[str] = dataclasses.field(default_factory=list)  # tool_use ids
    cut_texts: int = 0
    dropped_blocks: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.omitted_inputs or self.cut_texts or self.dropped_blocks)


def bound_reply(
    content: list[Block], limit: int = MAX_REPLY_BYTES, redact: Redact = lambda value: value
) -> BoundedReply:
    """`content` as it fits `limit` bytes once redacted; untouched when it already fits."""

    def size(value: Any) -> int:
        return line_bytes(redact(value))

    blocks = list(content)
    result = BoundedReply(blocks)
    excess = size(blocks) - limit
    if excess <= 0:
        return result
    uses = [i for i, b in enumerate(blocks) if b.get("type") == "tool_use"]
    for i in sorted(uses, key=lambda i: -line_bytes(blocks[i].get("input"))):
        if excess <= 0:
            break
        noted = {**blocks[i], "input": history.omitted_input(blocks[i].get("input"))}
        if size(noted) < size(blocks[i]):
            excess -= size(blocks[i]) - size(noted)
            blocks[i] = noted
            result.omitted_inputs.append(str(noted.get("id")))
    texts = [i for i, b in enumerate(blocks) if b.get("type") == "text"]
    for i in sorted(texts, key=lambda i: -line_bytes(blocks[i])):
        if excess <= 0:
            break
        text = str(blocks[i].get("text", ""))
        note = f"[cut: this text of {len(text)} characters was longer than a transcript line]"
        # every character takes at least one byte, so dropping `need` of them frees enough
        need = excess + line_bytes(note)
        before = size(blocks[i])
        blocks[i] = {**blocks[i], "text": text[: max(0, len(text) - need)] + note}
        excess -= before - size(blocks[i])
        result.cut_texts += 1
    # measured whole again: a cut can undo a redaction mask, and a block may still be too large
    result.dropped_blocks = _drop_largest(blocks, limit, size)
    return result


def _drop_largest(blocks: list[Block], limit: int, size: Callable[[Any], int]) -> int:
    """The largest block becomes a note of its size, or goes where the note would be no smaller,
    until `blocks` fit `limit`; returns how many did. Each block is measured once and kept in a
    heap, the whole line again only once the blocks' own sizes say it fits: measuring every
    block for every one that goes took seconds for a reply of a thousand small blocks."""
    kept: list[Block | None] = list(blocks)
    heap = [(-size(block), i) for i, block in enumerate(kept)]  # the first of equals goes first
    heapq.heapify(heap)
    dropped = 0
    while heap and (excess := size([b for b in kept if b is not None]) - limit) > 0:
        while heap and excess > 0:
            negative, i = heapq.heappop(heap)
            block, before = kept[i], -negative
            assert block is not None  # a block leaves the heap as it goes
            kind = str(block.get("type"))[:40]
            note = {"type": "text", "text": f"[a {kind} block of {before} bytes, not kept]"}
            if (after := size(note)) < before:
                kept[i] = note
                heapq.heappush(heap, (-after, i))
                excess -= before - after
            else:  # many small blocks: the note would not be smaller, so the block goes
                kept[i] = None
                excess -= before + 1  # and the comma before the next one
            dropped += 1
    blocks[:] = [b for b in kept if b is not None]
    return dropped


def fit_turn(turn: AssistantTurn, recorder: Recorder, redact: Redact) -> AssistantTurn:
    """The turn bounded to a transcript line; a notice says what was cut."""
    bounded = bound_reply(turn.content, redact=redact)
    if not bounded.changed:
        return turn
    parts = []
    if bounded.omitted_inputs:
        parts.append(f"{len(bounded.omitted_inputs)} tool input(s) replaced by their size")
    if bounded.cut_texts:
        parts.append(f"{bounded.cut_texts} text block(s) cut")
    if bounded.dropped_blocks:
        parts.append(f"{bounded.dropped_blocks} block(s) replaced by a note")
    message = (
        "The model's reply was too long to record: "
        + "; ".join(parts)
        + ". Calls whose input was replaced are not run; the model is told."
    )
    recorder.emit(Notice(level="warning", kind="reply_too_long", message=message))
    return dataclasses.replace(turn, content=bounded.content)
