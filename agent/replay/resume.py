"""Rebuilding a session's conversation from its transcript, to resume after a stop or a crash.

A call that was announced but never got a result is answered with an error that tells the model
its effect is unknown, so every `tool_use` keeps exactly one `tool_result`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.loop.events import (
    Event,
    ModelResponse,
    SessionStart,
    TodoUpdate,
    ToolResultEvent,
    UserMessage,
)

INTERRUPTED_TEXT = "interrupted before completion; state unknown — check before acting"


@dataclass
class RebuiltSession:
    session_id: str
    model: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    todo_items: list[dict[str, Any]] = field(default_factory=list)
    interrupted_calls: list[str] = field(default_factory=list)
    last_seq: int = 0


def rebuild(events: list[Event]) -> RebuiltSession:
    start = next((e for e in events if isinstance(e, SessionStart)), None)
    rebuilt = RebuiltSession(
        session_id=events[0].session if events else "", model=start.model if start else ""
    )
    messages = rebuilt.messages
    pending: list[str] = []
    results: dict[str, dict[str, Any]] = {}

    def flush_results() -> None:
        if not pending:
            return
        blocks = []
        for call_id in pending:
            block = results.get(call_id)
            if block is None:
                rebuilt.interrupted_calls.append(call_id)
                block = {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": INTERRUPTED_TEXT,
                    "is_error": True,
                }
            blocks.append(block)
        messages.append({"role": "user", "content": blocks})
        pending.clear()
        results.clear()

    for event in events:
        rebuilt.last_seq = max(rebuilt.last_seq, event.seq)
        if isinstance(event, UserMessage):
            flush_results()
            block = {"type": "text", "text": event.text}
            if messages and messages[-1]["role"] == "user":
                messages[-1]["content"].append(block)
            else:
                messages.append({"role": "user", "content": [block]})
        elif isinstance(event, ModelResponse):
            flush_results()
            messages.append({"role": "assistant", "content": event.content})
            if event.stop_reason in {"tool_use", "max_tokens"}:
                pending.extend(b["id"] for b in event.content if b.get("type") == "tool_use")
        elif isinstance(event, ToolResultEvent) and event.id in pending:
            block = {"type": "tool_result", "tool_use_id": event.id, "content": event.text}
            if event.is_error:
                block["is_error"] = True
            results[event.id] = block
        elif isinstance(event, TodoUpdate):
            rebuilt.todo_items = event.items
    flush_results()
    return rebuilt
