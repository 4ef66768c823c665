"""Putting a session together from its parts: one place, so faces and tests build it alike."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from agent.loop.calls import Gate
from agent.loop.events import Notice, SessionStart, TodoUpdate
from agent.loop.executor import Executor, ExecutorLimits
from agent.loop.model_client import ModelClient
from agent.loop.recorder import Recorder, SessionListener
from agent.loop.session import Budgets, Session, SessionParts
from agent.loop.transcript import TranscriptWriter
from agent.replay.resume import RebuiltSession
from agent.safety.redact import Redactor
from tools.base import Tool, ToolContext
from tools.registry import ToolRegistry
from tools.todo import TodoItem, TodoList, TodoWriteTool


def build_session(
    *,
    client: ModelClient,
    tools: Iterable[Tool],
    context: ToolContext,
    system_prompt: str,
    model: str,
    transcript_path: Path | None,
    gate: Gate | None = None,
    budgets: Budgets | None = None,
    redactor: Redactor | None = None,
    limits: ExecutorLimits | None = None,
    mode: str = "ask",
    goal: str | None = None,
    session_id: str | None = None,
    listeners: list[SessionListener] | None = None,
    resume: RebuiltSession | None = None,
) -> Session:
    """A ready session with `todo_write` registered and its start recorded."""
    redactor = redactor or Redactor()
    parts_kwargs = {"session_id": session_id} if session_id else {}
    todo = TodoList()
    registry = ToolRegistry([*tools, TodoWriteTool(todo)])
    executor = Executor(registry, context, gate=gate, limits=limits)
    parts = SessionParts(
        client=client,
        executor=executor,
        recorder=Recorder(None, ""),
        system_prompt=system_prompt,
        model=model,
        budgets=budgets or Budgets(),
        todo=todo,
        redactor=redactor,
        **parts_kwargs,
    )
    writer = (
        TranscriptWriter(transcript_path, parts.session_id, redactor) if transcript_path else None
    )
    parts.recorder = Recorder(writer, parts.session_id)
    parts.recorder.listeners.extend(listeners or [])
    todo.on_change = lambda items: parts.recorder.emit(
        TodoUpdate(items=[item.model_dump() for item in items])
    )
    session = Session(parts, registry.definitions())
    parts.recorder.emit(
        SessionStart(
            model=model,
            mode=mode,
            tools=registry.names(),
            goal=goal,
            resumed_from=resume.session_id if resume else None,
        )
    )
    if resume is not None:
        session.messages = resume.messages
        todo.replace([TodoItem.model_validate(item) for item in resume.todo_items])
        for problem in resume.problems:
            parts.recorder.emit(Notice(level="warning", kind="resumed", message=problem))
        if resume.interrupted_calls:
            parts.recorder.emit(
                Notice(
                    level="warning",
                    kind="resumed",
                    message=(
                        f"{len(resume.interrupted_calls)} call(s) had not finished when the "
                        "session stopped; the model is told their state is unknown"
                    ),
                )
            )
    return session
