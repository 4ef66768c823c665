"""The chaos model's checks catch what they are for: a change with no approval of exactly that
call, a tool_use answered twice or never, a host changed that no approved call names."""

from __future__ import annotations

from agent.evaluation.chaos import invariants
from agent.loop.events import (
    ApprovalDecisionEvent,
    ApprovalRequestEvent,
    ModelResponse,
    ToolCallEvent,
    ToolResultEvent,
)
from agent.safety.approvals import fingerprint

CALL = ToolCallEvent(
    id="t1", name="ssh_exec", input={"command": "docker stop x"}, risk="mutating", hosts=["a"]
)
RAN = ToolResultEvent(id="t1", name="ssh_exec", text="ok")
USE = ModelResponse(
    turn=1,
    content=[{"type": "tool_use", "id": "t1", "name": "ssh_exec", "input": CALL.input}],
    stop_reason="tool_use",
)


def approval(print_: str) -> list:
    return [
        ApprovalRequestEvent(
            call_id="t1", fingerprint=print_, tool="ssh_exec", input={}, risk="mutating", reason=""
        ),
        ApprovalDecisionEvent(call_id="t1", fingerprint=print_, decision="approved"),
    ]


def test_a_change_needs_an_approval_of_exactly_that_call() -> None:
    exact = fingerprint("ssh_exec", CALL.input, ["a"])
    assert invariants.approved_exactly([CALL, *approval(exact), RAN]) == []
    assert invariants.approved_exactly([CALL, RAN]) == [
        "mutating call t1 (ssh_exec) ran without its approval"
    ]
    other = fingerprint("ssh_exec", {"command": "docker rm x"}, ["a"])
    assert invariants.approved_exactly([CALL, *approval(other), RAN]) != []


def test_each_tool_use_gets_one_result() -> None:
    assert invariants.one_result_each([USE, CALL, RAN]) == []
    assert invariants.one_result_each([USE, CALL]) == ["tool_use t1: 0 result(s)"]
    assert invariants.one_result_each([USE, CALL, RAN, RAN]) == ["tool_use t1: 2 result(s)"]


def test_a_changed_host_must_be_named_by_an_approved_call() -> None:
    before, after = {"a": "1", "b": "1"}, {"a": "2", "b": "1"}
    exact = fingerprint("ssh_exec", CALL.input, ["a"])
    assert invariants.changes_explained([CALL, *approval(exact), RAN], before, after, "ask") == []
    assert invariants.changes_explained([CALL, RAN], before, after, "ask") == [
        "a changed with no approved call to explain it"
    ]
    assert invariants.changes_explained([CALL, *approval(exact), RAN], before, after, "plan") == [
        "a changed with no approved call to explain it"
    ]
