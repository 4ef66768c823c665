"""Rebuilding a session from its transcript, to resume after a stop or a crash.

The conversation, the todo list and the session state (computed deployments, the approved plan,
rollouts) come back, and the jobs the session started, with their last recorded state, for the
runtime to find on their hosts (agent/runtime/reattach.py). Recorded history edits (a batch
cut to its budget, compaction) are applied where they happened, so the messages are exactly
those the live session sent. A call that was announced but never got a result is answered with
an error that tells the model its effect is unknown, so every `tool_use` keeps exactly one
`tool_result`.
A plan counts as approved again only when the transcript also holds the approval decision the
gate recorded for exactly that plan; an edited transcript cannot approve one by itself. The
calls that ran on a step approved with the plan are listed in order, with how they ended, so the
resumed grant is used up exactly as the live one was (agent/runtime/grant_uses.py).
A transcript is a file anyone may have edited: todo items that do not validate are left out
with a warning in `problems`, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent.loop import history
from agent.loop.events import (
    ApprovalDecisionEvent,
    Event,
    HistoryEdit,
    JobEvent,
    ModelResponse,
    SessionStart,
    StateChangeEvent,
    TodoUpdate,
    ToolCallEvent,
    ToolResultEvent,
    UserMessage,
)
from agent.loop.resumed import GrantedCall, KnownJob, RebuiltSession
from agent.loop.transcript import read_session_file
from agent.safety.approvals import PLAN_CALL_ID
from agent.safety.gate import PLAN_APPROVAL
from tools.deploy.rollout.state import PlanApproved, StateChange
from tools.text.validation import validation_problems
from tools.todo import TodoItem

INTERRUPTED_TEXT = "interrupted before completion; state unknown — check before acting"
PLAN_DECISION_CALL = PLAN_CALL_ID  # the call_id the gate records plan decisions under
APPROVING = frozenset({"approved", "approved_with_edit"})
_WITH_STEPS = "with steps:"  # marks, in the set of approved plans, those approved with steps


def rebuild_file(path: Path) -> tuple[RebuiltSession, list[str]]:
    """The session in a transcript file, and what of the file could not be read or taken;
    NotATranscript for a file that holds no session at all (as `scout replay` refuses it)."""
    loaded = read_session_file(path)
    rebuilt = rebuild(loaded.events)
    return rebuilt, [*loaded.problems, *rebuilt.problems]


def elsewhere(rebuilt: RebuiltSession, hosts: dict[str, str]) -> str | None:
    """Why resuming `rebuilt` on `hosts` (Inventory.where()) would act on other machines than
    the session ran on, or None. A host the inventory has in addition is no difference; a host
    it lost, or a name that now reaches another machine, is: the plan's step approvals and the
    session's jobs were given for, and started on, those machines."""
    if not rebuilt.hosts:
        return None
    if not hosts:
        return f"the session ran on {', '.join(rebuilt.hosts)}, and no inventory is given"
    differences = [
        f"{name} was {was}, the inventory has no {name}"
        if name not in hosts
        else f"{name} was {was}, the inventory says {hosts[name]}"
        for name, was in rebuilt.hosts.items()
        if hosts.get(name) != was
    ]
    if not differences:
        return None
    ran_on = f" (the simulator's scenario {rebuilt.scenario})" if rebuilt.scenario else ""
    return f"the session ran on other hosts{ran_on}: {'; '.join(differences)}"


def rebuild(events: list[Event]) -> RebuiltSession:
    start = next((e for e in events if isinstance(e, SessionStart)), None)
    rebuilt = RebuiltSession(
        session_id=events[0].session if events else "", model=start.model if start else ""
    )
    if start is not None and (start.hosts or start.scenario):
        rebuilt.hosts, rebuilt.scenario = start.hosts, start.scenario
    messages = rebuilt.messages
    pending: list[str] = []
    results: dict[str, dict[str, Any]] = {}
    approved_plans: set[str] = set()
    calls: dict[str, ToolCallEvent] = {}
    granted: dict[str, GrantedCall] = {}  # calls that ran on a step approved with the plan

    def flush_results() -> None:
        if not pending:
            return
        blocks = []
        for call_id in pending:
            block = results.get(call_id)
            if block is None:
                rebuilt.interrupted_calls.append(call_id)
                block = history.tool_result_block(call_id, INTERRUPTED_TEXT, True)
            blocks.append(block)
        history.add_results(messages, blocks)
        pending.clear()
        results.clear()

    for event in events:
        rebuilt.last_seq = max(rebuilt.last_seq, event.seq)
        if isinstance(event, UserMessage):
            flush_results()
            history.add_user_text(messages, event.text)
        elif isinstance(event, ModelResponse):
            flush_results()
            history.add_assistant(messages, event.content)
            if event.stop_reason in {"tool_use", "max_tokens"}:
                pending.extend(b["id"] for b in event.content if b.get("type") == "tool_use")
        elif isinstance(event, ToolCallEvent):
            rebuilt.ledger.called(event)
            calls[event.id] = event
        elif isinstance(event, ToolResultEvent):
            rebuilt.ledger.finished(event)
            if event.id in granted:
                granted[event.id].ok = not event.is_error
            _started_jobs(event, rebuilt)
            if event.id in pending:
                results[event.id] = history.tool_result_block(event.id, event.text, event.is_error)
        elif isinstance(event, HistoryEdit):
            flush_results()
            history.apply_edit(messages, event.replaced, event.briefing, event.folded)
            rebuilt.ledger.fold(event.folded)
        elif isinstance(event, TodoUpdate):
            rebuilt.todo_items, rebuilt.problems = _valid_todo_items(event, rebuilt.problems)
        elif isinstance(event, ApprovalDecisionEvent) and event.call_id == PLAN_DECISION_CALL:
            if event.decision in APPROVING:
                approved_plans.add(event.fingerprint)
                if event.approve_steps:
                    approved_plans.add(_WITH_STEPS + event.fingerprint)
        elif isinstance(event, ApprovalDecisionEvent) and event.decided_by == PLAN_APPROVAL:
            call = calls.get(event.call_id)
            if call is not None and event.decision in APPROVING:
                granted[call.id] = GrantedCall(call.id, call.name, call.input)
        elif isinstance(event, JobEvent):
            key = f"{event.host}/{event.name}"
            command = event.command or (rebuilt.jobs[key].command if key in rebuilt.jobs else "")
            rebuilt.jobs[key] = KnownJob(event.host, event.name, command, event.state)
        elif isinstance(event, StateChangeEvent):
            refusal = _refusal(event, approved_plans)
            if refusal is None:
                rebuilt.state_changes.append(_as_decided(event.change, approved_plans))
                if isinstance(event.change, PlanApproved):
                    granted.clear()  # a newly approved plan has a grant of its own
            else:
                rebuilt.refused.append(refusal)
    flush_results()
    rebuilt.granted_calls = list(granted.values())
    return rebuilt


def _started_jobs(event: ToolResultEvent, rebuilt: RebuiltSession) -> None:
    """Jobs a job_start call started (also in transcripts from before job events)."""
    if event.name != "job_start":
        return
    for job in event.data.get("jobs", []):
        if isinstance(job, dict) and isinstance(job.get("host"), str) and job.get("name"):
            key = f"{job['host']}/{job['name']}"
            rebuilt.jobs[key] = KnownJob(job["host"], str(job["name"]), str(job.get("command", "")))


def _as_decided(change: StateChange, approved_plans: set[str]) -> StateChange:
    """A plan recorded as approved with its steps keeps them only when the recorded decision
    approved them too."""
    decided = _WITH_STEPS + change.plan_hash if isinstance(change, PlanApproved) else ""
    if isinstance(change, PlanApproved) and change.with_steps and decided not in approved_plans:
        return change.model_copy(update={"with_steps": False})
    return change


def _refusal(event: StateChangeEvent, approved_plans: set[str]) -> str | None:
    """Why a recorded state change is not taken back; None when it may be."""
    change = event.change
    if not isinstance(change, PlanApproved):
        return None
    if change.plan.digest() != change.plan_hash:
        return (
            f"the plan recorded as approved ({change.plan_hash}) does not match its own hash; "
            "the session resumes read-only until a plan is approved"
        )
    if change.plan_hash not in approved_plans:
        return (
            f"the transcript says plan {change.plan_hash} was approved but holds no approval "
            "decision for it; the session resumes read-only until a plan is approved"
        )
    return None


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
            found.append(
                f"todo item {number} of the last todo update is not valid "
                f"({validation_problems(exc)[0]}); left it out of the resumed todo list"
            )
    return kept, found
