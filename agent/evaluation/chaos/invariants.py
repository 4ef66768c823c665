"""What must hold after any chaos session, read from its transcript and the hosts' state.

Each check returns the broken invariants as lines (empty: it held). They read only what a
reviewer could read: the transcript's events, the simulated hosts' state before and after,
and the state the live session ended with.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from agent.loop.events import (
    ApprovalDecisionEvent,
    ApprovalRequestEvent,
    Event,
    ModelResponse,
    ToolCallEvent,
    ToolResultEvent,
)
from agent.runtime.resume import rebuild
from agent.safety.approvals import fingerprint
from tools.deploy.rollout.state import SessionState

APPROVING = {"approved", "approved_with_edit"}
VOLATILE = {"sim_pid"}  # the simulator's own bookkeeping, not the host's


def host_snapshot(states: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Each host's state as one comparable string."""
    return {
        host: json.dumps({k: v for k, v in state.items() if k not in VOLATILE}, sort_keys=True)
        for host, state in states.items()
    }


def one_result_each(events: list[Event]) -> list[str]:
    """Every tool_use id the model sent got exactly one tool_result (a repeated id, one)."""
    uses: set[str] = set()
    for event in events:
        if isinstance(event, ModelResponse):
            uses.update(b["id"] for b in event.content if b.get("type") == "tool_use")
    results = Counter(e.id for e in events if isinstance(e, ToolResultEvent))
    return [
        f"tool_use {call_id}: {results[call_id]} result(s)"
        for call_id in sorted(uses | set(results))
        if results[call_id] != 1
    ]


def approved_exactly(events: list[Event]) -> list[str]:
    """No state-changing call succeeded without an approval of exactly that call."""
    requests = {e.call_id: e for e in events if isinstance(e, ApprovalRequestEvent)}
    decisions: dict[str, list[ApprovalDecisionEvent]] = {}
    for event in events:
        if isinstance(event, ApprovalDecisionEvent):
            decisions.setdefault(event.call_id, []).append(event)
    results = {e.id: e for e in events if isinstance(e, ToolResultEvent)}
    broken = []
    for call in (e for e in events if isinstance(e, ToolCallEvent)):
        if call.risk in (None, "read_only"):
            continue
        result = results.get(call.id)
        if result is None or result.is_error:
            continue
        expected = fingerprint(call.name, call.input, call.hosts)
        ok = [
            d
            for d in decisions.get(call.id, [])
            if d.decision in APPROVING
            and (d.fingerprint == expected or d.decision == "approved_with_edit")
            and requests.get(call.id) is not None
            and requests[call.id].fingerprint == d.fingerprint
        ]
        if not ok:
            broken.append(f"{call.risk} call {call.id} ({call.name}) ran without its approval")
    return broken


def changes_that_ran(events: list[Event]) -> int:
    """How many state-changing calls ran to a result that is not an error."""
    results = {e.id: e for e in events if isinstance(e, ToolResultEvent)}
    return sum(
        1
        for call in events
        if isinstance(call, ToolCallEvent)
        and call.risk not in (None, "read_only")
        and call.id in results
        and not results[call.id].is_error
    )


def changes_explained(
    events: list[Event], before: dict[str, str], after: dict[str, str], mode: str
) -> list[str]:
    """A host whose state changed was named by an approved state-changing call."""
    changed = sorted(h for h in before if before[h] != after.get(h))
    if not changed:
        return []
    approved = {
        d.call_id
        for d in events
        if isinstance(d, ApprovalDecisionEvent) and d.decision in APPROVING
    }
    allowed: set[str] = set()
    for call in (e for e in events if isinstance(e, ToolCallEvent)):
        if call.risk not in (None, "read_only") and call.id in approved:
            allowed.update(call.hosts or before)
    if mode in ("plan", "ci"):
        allowed = set()
    return [
        f"{host} changed with no approved call to explain it"
        for host in changed
        if host not in allowed
    ]


def resumes_the_same(events: list[Event], live: SessionState) -> list[str]:
    """The transcript, rebuilt, holds the same plans and rollouts the live session ended with."""
    rebuilt = rebuild(events)
    state = SessionState()
    state.restore(rebuilt.state_changes)
    broken = []
    if state.plan.approved_hash != live.plan.approved_hash:
        broken.append(
            f"resume: approved plan {state.plan.approved_hash} != live {live.plan.approved_hash}"
        )
    if sorted(state.deployments) != sorted(live.deployments):
        broken.append("resume: computed deployments differ from the live session's")
    for digest, rollout in live.rollouts.items():
        again = state.rollouts.get(digest)
        if again is None and not rollout.outcomes:
            continue  # opened by a step the gate refused: nothing happened to record
        if again is None or again.summary() != rollout.summary():
            broken.append(f"resume: rollout of {digest} differs from the live session's")
    return broken
