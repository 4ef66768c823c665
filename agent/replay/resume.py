"""Rebuilding a session's conversation from its transcript, to resume after a stop or a crash.

A call that was announced but never got a result is answered with an error that tells the model
its effect is unknown, so every `tool_use` keeps exactly one `tool_result`. A transcript is a
file anyone may have edited: todo items that do not validate are left out with a warning in
`problems`, never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agent.loop.events import (
    Event,
    ModelResponse,
    SessionStart,
    TodoUpdate,
    ToolResultEvent,
    UserMessage,
)
from tools.todo import TodoItem

INTERRUPTED_TEXT = "interrupted before completion; state unknown — check before acting"


@dataclass
class RebuiltSession:
    session_id: str
    model: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    todo_items: list[dict[str, Any]] = field(default_factory=list)
    interrupted_calls: list[str] = field(default_factory=list)
    last_seq: int = 0
    problems: list[str] = field(default_factory=list)


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
            rebuilt.todo_items, rebuilt.problems = _valid_todo_items(event, rebuilt.problems)
    flush_results()
    return rebuilt


def _valid_todo_items(
    event: TodoUpdate, problems: list[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The update's items that validate; the others named in the returned problems (which
    replace earlier todo problems: only the last list counts)."""
    kept: list[dict[str, Any]] = []
    found = [problem for problem in problems if not problem.startswith("todo item")]
    for number, item in enumerate(event.items, start=1):
        try:
            kept.append(TodoItem.model_validate(item).model_dump())
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "(item)"
            found.append(
                f"todo item {number} of the last todo update is not valid ({where}: "
                f"{first['msg']}); left it out of the resumed todo list"
            )
    return kept, found
