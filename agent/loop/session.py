"""The agent loop: one user message in, model turns and tool batches until the model is done.

Each turn is streamed; every `tool_use` of a turn runs as one batch; all results go back in one
user message, `tool_result` blocks first and in call order, within the turn's budget
(agent/loop/batch_budget.py). Before each model call, old results are compacted when a chunk is
due (agent/loop/compaction.py). Every step, edits of the history included, is recorded as it
happens.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import structlog

from agent.loop import history
from agent.loop.accounting import Usage
from agent.loop.batch_budget import shape_batch
from agent.loop.calls import PreparedCall, ToolCall
from agent.loop.compaction import CallLedger, CompactionPolicy, is_stub, plan_compaction
from agent.loop.events import (
    ErrorEvent,
    HistoryEdit,
    ModelRequest,
    ModelResponse,
    Notice,
    SessionEnd,
    ToolCallEvent,
    ToolResultEvent,
    UserMessage,
)
from agent.loop.executor import BatchObserver, Executor
from agent.loop.model_turn import AssistantTurn, ModelClient, ModelError, TurnRequest
from agent.loop.recorder import Recorder
from agent.loop.redaction import Redaction
from agent.loop.reply_bound import fit_turn
from tools.base import ToolResult
from tools.todo import TodoList

log = structlog.get_logger(__name__)

Stop = Literal[
    "end_turn", "max_tokens", "refusal", "context_exceeded", "budget", "error", "cancelled"
]

NOT_RUN_TRUNCATED = (
    "Not run: your reply was cut off by the output token limit, so this call may be incomplete. "
    "Send it again in a shorter reply."
)


@dataclass(frozen=True)
class Budgets:
    """When a session stops on its own; the values come from Settings (one place for defaults)."""

    max_turns: int
    max_output_tokens: int
    max_cost_usd: float
    max_tokens_per_turn: int


@dataclass
class TurnOutcome:
    stop: Stop
    message: str = ""
    text: str = ""


@dataclass
class SessionParts:
    """What a session is assembled from; the faces build this, tests too."""

    client: ModelClient
    executor: Executor
    recorder: Recorder
    system_prompt: str
    model: str
    budgets: Budgets
    redactor: Redaction
    compaction: CompactionPolicy
    batch_budget_chars: int
    briefing: Callable[[int], str]  # the briefing at a model turn (agent/loop/briefing.py)
    todo: TodoList = field(default_factory=TodoList)
    ledger: CallLedger = field(default_factory=CallLedger)
    session_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])


class _RecordingObserver(BatchObserver):
    """Records tool_call and tool_result events as the batch runs, and keeps the ledger."""

    def __init__(self, recorder: Recorder, ledger: CallLedger) -> None:
        self.recorder = recorder
        self.ledger = ledger
        self.announced: set[str] = set()

    def _announce(self, call: ToolCall, prepared: PreparedCall | None = None) -> None:
        self.announced.add(call.id)
        event = self.recorder.emit(
            ToolCallEvent(
                id=call.id,
                name=call.name,
                input=call.input,
                risk=prepared.risk.label if prepared else None,
                hosts=prepared.hosts if prepared else [],
                summary=prepared.summary if prepared else "",
            )
        )
        assert isinstance(event, ToolCallEvent)
        self.ledger.called(event)

    def call_prepared(self, prepared: PreparedCall) -> None:
        self._announce(prepared.call, prepared)

    def call_started(self, prepared: PreparedCall) -> None:
        self.recorder.call_started(
            call_id=prepared.call.id,
            tool=prepared.tool.name,
            summary=prepared.summary,
            hosts=prepared.hosts,
        )

    def call_finished(self, call: ToolCall, result: ToolResult) -> None:
        if call.id not in self.announced:
            self._announce(call)
        event = self.recorder.emit(
            ToolResultEvent(
                id=call.id,
                name=call.name,
                text=result.text,
                is_error=result.is_error,
                data=result.data,
                meta=result.meta,
            )
        )
        assert isinstance(event, ToolResultEvent)
        self.ledger.finished(event)


def _size(messages: list[dict[str, Any]]) -> int:
    return len(json.dumps(messages, ensure_ascii=False, separators=(",", ":")))


class Session:
    def __init__(self, parts: SessionParts, tools: list[dict[str, Any]]) -> None:
        self.parts = parts
        self.id = parts.session_id
        self.recorder = parts.recorder
        self.executor = parts.executor
        self.client = parts.client
        self.todo = parts.todo
        self.ledger = parts.ledger
        self.tools = tools
        self.messages: list[dict[str, Any]] = []
        self.usage = Usage()
        self._stream_task: asyncio.Task[AssistantTurn] | None = None
        self._in_batch = False
        self._interrupted = False

    # -- public surface -------------------------------------------------------------------
    async def send(self, text: str) -> TurnOutcome:
        """Handle one user message until the model ends its turn, a budget, or an interrupt."""
        self._interrupted = False
        self.recorder.emit(UserMessage(text=text))
        history.add_user_text(self.messages, text)
        squeezed = False
        while True:
            budget_stop = self._budget_exceeded()
            if budget_stop:
                self.recorder.emit(Notice(level="warning", kind="budget", message=budget_stop))
                return TurnOutcome("budget", budget_stop)
            try:
                turn = await self._model_turn()
            except asyncio.CancelledError:
                if not self._interrupted:
                    raise
                return self._cancelled("Stopped while the model was answering.")
            except ModelError as exc:
                if exc.kind == "prompt_too_long" and not squeezed and self._compact(force=True):
                    squeezed = True  # the history no longer fits: compact all there is, once
                    continue
                self.recorder.emit(ErrorEvent(kind="model", message=str(exc)))
                return TurnOutcome("error", str(exc))
            outcome = await self._handle(turn)
            if outcome is not None:
                return outcome

    def interrupt(self) -> None:
        """Ctrl-C: stop the running batch (its calls end as cancelled) or the model's stream."""
        self._interrupted = True
        if self._in_batch:
            self.executor.cancel_batch()
        elif self._stream_task is not None:
            self._stream_task.cancel()

    def end(self, outcome: str, reason: str = "") -> None:
        self.recorder.emit(SessionEnd(outcome=outcome, reason=reason, usage=self.usage.as_dict()))

    # -- one model turn -------------------------------------------------------------------
    async def _model_turn(self) -> AssistantTurn:
        self._compact()
        request = TurnRequest(
            model=self.parts.model,
            max_tokens=self.parts.budgets.max_tokens_per_turn,
            system=self.parts.system_prompt,
            tools=self.tools,
            messages=self.messages,
        )
        last = self.messages[-1]["content"] if self.messages else []
        self.recorder.emit(
            ModelRequest(
                turn=self.usage.turns + 1,
                digest=request.digest(),
                message_count=len(self.messages),
                last_user=last if isinstance(last, list) else [{"type": "text", "text": last}],
                compacted_results=sum(
                    is_stub(history.text_of(block))
                    for block in history.result_blocks(self.messages).values()
                ),
            )
        )
        self.usage.request_sent()

        def on_retry(attempt: int, why: str) -> None:
            self.recorder.emit(
                Notice(
                    level="warning",
                    kind="retry",
                    message=f"the model call failed ({why}); trying again (attempt {attempt + 1})",
                )
            )

        self._stream_task = asyncio.create_task(
            self.client.stream(request, self.recorder.text, on_retry)
        )
        try:
            turn = await self._stream_task
        finally:
            self._stream_task = None
        turn = fit_turn(turn, self.recorder, self.parts.redactor.data)  # as a line holds it
        self.usage.add(turn.usage, turn.model or self.parts.model, turn.usage_source)
        self.recorder.emit(
            ModelResponse(
                turn=self.usage.turns,
                content=turn.content,
                stop_reason=turn.stop_reason,
                usage=turn.usage,
                usage_source=turn.usage_source,
                model=turn.model,
                request_id=turn.request_id,
            )
        )
        return turn

    async def _handle(self, turn: AssistantTurn) -> TurnOutcome | None:
        """Act on the stop reason; None means: ask the model again."""
        kept = history.add_assistant(self.messages, turn.content)
        uses = [b for b in kept if b.get("type") == "tool_use"]
        if len(uses) < len(turn.tool_uses()):
            message = "The model reused a tool_use id; the repeated call was not run."
            self.recorder.emit(Notice(level="warning", kind="duplicate_call", message=message))
        reason = turn.stop_reason
        # the model's own inputs run (the history may hold an oversized one as a note)
        inputs = {b["id"]: b.get("input") or {} for b in reversed(turn.tool_uses())}
        calls = [ToolCall(b["id"], b["name"], inputs[b["id"]]) for b in uses]
        if reason == "max_tokens":
            if calls:
                results = [ToolResult.error(NOT_RUN_TRUNCATED, not_run=True) for _ in calls]
                self._record_unrun(calls, results)
                self._append_results(calls, results)
            message = (
                "The model's reply hit the output token limit and was cut off"
                + (f"; its {len(calls)} tool call(s) were not run." if calls else ".")
                + " Ask it to continue, or raise max_tokens_per_turn."
            )
            self.recorder.emit(Notice(level="warning", kind="max_tokens", message=message))
            return TurnOutcome("max_tokens", message, turn.text())
        if reason == "pause_turn" and not calls:
            return None  # continued as is; a paused turn's tool calls run like any others
        if reason == "refusal":
            message = "The model declined to continue with this request (refusal)."
            self.recorder.emit(Notice(level="warning", kind="refusal", message=message))
            return TurnOutcome("refusal", message, turn.text())
        if reason == "model_context_window_exceeded":
            message = (
                "The conversation no longer fits the model's context window. Start a new "
                "session (the world model and todo list can be carried over with /save)."
            )
            self.recorder.emit(Notice(level="warning", kind="context", message=message))
            return TurnOutcome("context_exceeded", message, turn.text())
        if calls:
            results = await self._run_batch(calls)
            self._append_results(calls, results)
            if self._interrupted:
                return self._cancelled("Stopped the running batch; unfinished calls cancelled.")
            return None
        return TurnOutcome("end_turn", "", turn.text())

    async def run_operator_calls(self, calls: list[ToolCall]) -> list[ToolResult]:
        """Calls the operator sends directly (`scout exec`): validated, gated, walled and
        recorded exactly as the model's are; nothing is added to the conversation."""
        return await self._run_batch(calls)

    async def _run_batch(self, calls: list[ToolCall]) -> list[ToolResult]:
        self._in_batch = True
        try:
            return await self.executor.run_batch(
                calls, _RecordingObserver(self.recorder, self.ledger)
            )
        finally:
            self._in_batch = False

    # -- history ----------------------------------------------------------------------------
    def _append_results(self, calls: list[ToolCall], results: list[ToolResult]) -> None:
        """One user message of results in call order, the batch bounded by its budget."""
        redact = self.parts.redactor.text
        blocks = [
            history.tool_result_block(call.id, redact(result.text), result.is_error)
            for call, result in zip(calls, results, strict=True)
        ]
        history.add_results(self.messages, blocks)
        spill = self.executor.context.spill_dir
        shaped = shape_batch(calls, results, self.parts.batch_budget_chars, spill)
        if shaped:
            self._edit("batch_budget", {key: redact(text) for key, text in shaped.items()})

    def _compact(self, *, force: bool = False) -> bool:
        """Compact old results if a chunk is due (or all there is, with `force`)."""
        plan = plan_compaction(self.messages, self.ledger, self.parts.compaction, force=force)
        if not plan:
            return False
        redact = self.parts.redactor.text
        self.ledger.fold(plan.folded)
        briefing = redact(self.parts.briefing(self.usage.turns + 1))
        stubs = {key: redact(text) for key, text in plan.stubs.items()}
        removed = self._edit("compaction", stubs, briefing, plan.folded)
        self.usage.compaction(len(plan.stubs), removed)
        return True

    def _edit(
        self,
        reason: str,
        replaced: dict[str, str],
        briefing: str | None = None,
        folded: list[str] | None = None,
    ) -> int:
        """Apply and record one history edit; returns how many characters the history lost."""
        before = _size(self.messages)
        history.apply_edit(self.messages, replaced, briefing, folded)
        after = _size(self.messages)
        self.recorder.emit(
            HistoryEdit(
                reason=reason,  # type: ignore[arg-type]
                turn=self.usage.turns,
                replaced=replaced,
                briefing=briefing,
                folded=folded or [],
                chars_before=before,
                chars_after=after,
            )
        )
        return before - after

    def _record_unrun(self, calls: list[ToolCall], results: list[ToolResult]) -> None:
        observer = _RecordingObserver(self.recorder, self.ledger)
        for call, result in zip(calls, results, strict=True):
            observer.call_finished(call, result)

    def _budget_exceeded(self) -> str | None:
        budgets, usage = self.parts.budgets, self.usage
        if usage.turns >= budgets.max_turns:
            return f"Stopped: the session used its budget of {budgets.max_turns} model turns."
        if usage.output_tokens >= budgets.max_output_tokens:
            limit = budgets.max_output_tokens
            return f"Stopped: the session used its output budget ({limit} tokens)."
        if usage.cost_usd >= budgets.max_cost_usd:
            return (
                f"Stopped: the session reached its cost budget of ${budgets.max_cost_usd:.2f} "
                f"(spent about ${usage.cost_usd:.2f})."
            )
        return None

    def _cancelled(self, message: str) -> TurnOutcome:
        self.recorder.emit(Notice(level="warning", kind="cancelled", message=message))
        return TurnOutcome("cancelled", message)
