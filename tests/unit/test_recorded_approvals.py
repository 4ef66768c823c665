"""A recording's decisions answer only the call and fingerprint they were made for, once each."""

from __future__ import annotations

from agent.loop.events import ApprovalDecisionEvent
from agent.replay.recorded_approvals import RecordedApprover
from agent.safety.approvals import ApprovalRequest


def request(call_id: str, fingerprint: str) -> ApprovalRequest:
    return ApprovalRequest(
        id="q1", fingerprint=fingerprint, tool="ssh_exec", input={}, risk="mutating", reason="r",
        call_id=call_id,
    )  # fmt: skip


def decision(call_id: str, fingerprint: str, kind: str = "approved") -> ApprovalDecisionEvent:
    return ApprovalDecisionEvent(call_id=call_id, fingerprint=fingerprint, decision=kind)


async def test_a_decision_answers_its_own_call_and_fingerprint_once() -> None:
    recorded = RecordedApprover(
        [
            decision("plan", "plan:1"),
            decision("t1", "sha256:a"),
            decision("t2", "sha256:b", "denied"),
        ]
    )
    assert (await recorded.decide(request("plan", "plan:1"))).kind == "approved"
    assert (await recorded.decide(request("t2", "sha256:b"))).kind == "denied"  # any order
    assert (await recorded.decide(request("t1", "sha256:a"))).kind == "approved"
    assert recorded.drift == [] and recorded.halt_reason() is None

    again = await recorded.decide(request("t1", "sha256:a"))  # used once
    assert again.kind == "denied" and "no decision for this call" in again.message
    assert recorded.halt_reason() is not None


async def test_the_same_fingerprint_for_another_call_is_drift_and_ends_the_recording() -> None:
    recorded = RecordedApprover([decision("t1", "sha256:a"), decision("t2", "sha256:b")])
    moved = await recorded.decide(request("t9", "sha256:a"))
    later = await recorded.decide(request("t2", "sha256:b"))  # would match, but drift came first
    assert moved.kind == "denied" and later.kind == "denied"
    assert "nothing more runs on it" in later.message
    assert recorded.drift == [
        "approval for call t9 (ssh_exec, sha256:a): the recording has no decision for it; "
        "denied, and no later step ran"
    ]
