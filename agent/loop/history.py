"""How the conversation the model reads is built and edited, in one place.

The live session (agent/loop/session.py) and the resume (agent/runtime/resume.py) build their
messages with these functions from the same facts, so a resumed session reads exactly what the
live one would have read. Edits (a batch cut to its budget, compaction) replace tool_result texts
by id and move the briefing to the end of the compacted part; both are recorded as
`history_edit` events and replayed through `apply_edit`.
"""

from __future__ import annotations

import json
from typing import Any

Message = dict[str, Any]

BRIEFING_MARK = "[Scout briefing"  # how the briefing's text block begins
STUB_MARK = "[compacted:"  # how a compacted result's text begins
# A tool_use input longer than this (as JSON) is kept in the history as a note of its size: a
# model that wrote a megabyte of input would otherwise make every later request too long.
MAX_KEPT_INPUT_CHARS = 64_000


def tool_result_block(call_id: str, text: str, is_error: bool) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": text}
    if is_error:
        block["is_error"] = True
    return block


def add_user_text(messages: list[Message], text: str) -> None:
    """A user turn; after pending tool_results it joins their message (results stay first)."""
    block = {"type": "text", "text": text}
    if messages and messages[-1]["role"] == "user":
        messages[-1]["content"].append(block)
    else:
        messages.append({"role": "user", "content": [block]})


def add_assistant(messages: list[Message], content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model's reply, without blank text blocks (the API refuses them when sent back);
    returns the blocks kept, whose tool calls are the ones to run.

    A reply with nothing left (an empty refusal) adds no message: the API accepts an empty
    assistant message only as the final one, and the next user text then joins the previous one.
    A tool_use whose id the history already holds is dropped and never runs: the API refuses a
    request with two tool_use blocks of one id, and one result could not answer both.
    """
    seen = {
        block.get("id")
        for message in messages
        if message["role"] == "assistant"
        for block in message["content"]
        if block.get("type") == "tool_use"
    }
    kept = []
    for block in content:
        if block.get("type") == "text" and not str(block.get("text", "")).strip():
            continue
        if block.get("type") == "tool_use":
            if block.get("id") in seen:
                continue
            seen.add(block.get("id"))
        kept.append(_bounded_input(block))
    if kept:
        messages.append({"role": "assistant", "content": kept})
    return kept


def _bounded_input(block: dict[str, Any]) -> dict[str, Any]:
    """A tool_use whose input is too long to send back again, its input replaced by its size."""
    if block.get("type") != "tool_use":
        return block
    if len(json.dumps(block.get("input"), default=str)) <= MAX_KEPT_INPUT_CHARS:
        return block
    return {**block, "input": omitted_input(block.get("input"))}


def omitted_input(value: Any) -> dict[str, str]:
    """The note that stands for an input too long to keep: its size (as JSON), nothing else."""
    size = len(json.dumps(value, default=str))
    return {"omitted": f"an input of {size} characters, not kept"}


def is_omitted_input(value: Any) -> bool:
    """Is `value` such a note (no tool has an `omitted` field): a call holding it never runs."""
    return isinstance(value, dict) and set(value) == {"omitted"}


def add_results(messages: list[Message], blocks: list[dict[str, Any]]) -> None:
    messages.append({"role": "user", "content": blocks})


def result_blocks(messages: list[Message]) -> dict[str, dict[str, Any]]:
    """Every tool_result block by its tool_use_id (the blocks themselves, to edit in place)."""
    found: dict[str, dict[str, Any]] = {}
    for message in messages:
        if message["role"] != "user" or isinstance(message["content"], str):
            continue
        for block in message["content"]:
            if block.get("type") == "tool_result":
                found[block["tool_use_id"]] = block
    return found


def apply_edit(
    messages: list[Message],
    replaced: dict[str, str],
    briefing: str | None = None,
    folded: list[str] | None = None,
) -> None:
    """Replace tool_result texts by id, fold whole turns away, and move the briefing.

    A folded turn is the reply holding those tool_use ids and the message of its results;
    removing both keeps every tool_use answered and the roles alternating. The briefing sits
    right after the newest compacted result: above it the history is compacted, below it whole.
    Moving it rewrites the history only from the previous boundary on, so the prompt cache keeps
    everything older.
    """
    blocks = result_blocks(messages)
    for call_id, text in replaced.items():
        if call_id in blocks:
            blocks[call_id]["content"] = text
    if folded:
        gone = set(folded)
        for index in reversed(range(len(messages))):
            content = messages[index]["content"]
            uses = isinstance(content, list) and any(b.get("id") in gone for b in content)
            if messages[index]["role"] == "assistant" and uses:
                del messages[index : index + 2]
    if briefing is None:
        return
    for message in messages:
        if isinstance(message["content"], list):
            message["content"] = [b for b in message["content"] if not is_briefing_block(b)]
    holder = _newest_compacted(messages) or (messages[0] if messages else None)
    if holder is not None:
        if isinstance(holder["content"], str):
            holder["content"] = [{"type": "text", "text": holder["content"]}]
        holder["content"].append({"type": "text", "text": briefing})


def _newest_compacted(messages: list[Message]) -> Message | None:
    for message in reversed(messages):
        content = message["content"]
        if isinstance(content, list) and any(
            b.get("type") == "tool_result" and text_of(b).startswith(STUB_MARK) for b in content
        ):
            return message
    return None


def is_briefing_block(block: dict[str, Any]) -> bool:
    return block.get("type") == "text" and str(block.get("text", "")).startswith(BRIEFING_MARK)


def briefing_position(messages: list[Message]) -> tuple[int, int] | None:
    """(message, block) index of the briefing, or None before the first compaction."""
    for index, message in enumerate(messages):
        if isinstance(message["content"], list):
            for position, block in enumerate(message["content"]):
                if is_briefing_block(block):
                    return index, position
    return None


def briefing_of(messages: list[Message]) -> str:
    """The briefing's text, or '' before the first compaction."""
    where = briefing_position(messages)
    return messages[where[0]]["content"][where[1]]["text"] if where else ""


def text_of(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))
