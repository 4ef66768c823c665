"""How the conversation the model reads is built and edited, in one place.

The live session (agent/loop/session.py) and the resume (agent/replay/resume.py) build their
messages with these functions from the same facts, so a resumed session reads exactly what the
live one would have read. Edits (a batch cut to its budget, compaction) replace tool_result texts
by id and refresh the briefing block at the head of the first message; both are recorded as
`history_edit` events and replayed through `apply_edit`.
"""

from __future__ import annotations

from typing import Any

Message = dict[str, Any]

BRIEFING_MARK = "[Scout briefing"  # how the briefing block at the head of messages[0] begins


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


def add_assistant(messages: list[Message], content: list[dict[str, Any]]) -> None:
    """The model's reply, without blank text blocks (the API refuses them when sent back).

    A reply with nothing left (an empty refusal) adds no message: the API accepts an empty
    assistant message only as the final one, and the next user text then joins the previous one.
    """
    kept = [
        block
        for block in content
        if block.get("type") != "text" or str(block.get("text", "")).strip()
    ]
    if kept:
        messages.append({"role": "assistant", "content": kept})


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
    messages: list[Message], replaced: dict[str, str], briefing: str | None = None
) -> None:
    """Replace tool_result texts by id; with `briefing`, put it at the head of the first message."""
    blocks = result_blocks(messages)
    for call_id, text in replaced.items():
        if call_id in blocks:
            blocks[call_id]["content"] = text
    if briefing is not None and messages:
        first = messages[0]
        if isinstance(first["content"], str):
            first["content"] = [{"type": "text", "text": first["content"]}]
        content = first["content"]
        if briefing_of(messages):
            content[0] = {"type": "text", "text": briefing}
        else:
            content.insert(0, {"type": "text", "text": briefing})


def briefing_of(messages: list[Message]) -> str:
    """The briefing at the head of the first message, or '' before the first compaction."""
    content = messages[0]["content"] if messages else []
    if isinstance(content, list) and content:
        text = str(content[0].get("text", ""))
        if content[0].get("type") == "text" and text.startswith(BRIEFING_MARK):
            return text
    return ""


def text_of(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))
