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
    while (excess := size(blocks) - limit) > 0:
        i = max(range(len(blocks)), key=lambda i: size(blocks[i]))
        before = size(blocks[i])
        kind = str(blocks[i].get("type"))[:40]
        note = {"type": "text", "text": f"[a {kind} block of {before} bytes, not kept]"}
        if size(note) < before:
            blocks[i] = note
        else:  # many small blocks: the note would not be smaller, so the block goes
            del blocks[i]
        result.dropped_blocks += 1
    return result


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
