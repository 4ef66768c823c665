"""The MCP session's approver: a decision exists only where Scout's approver made it, and it
authorises its own call, for its own principal, before it expires, once. No SDK needed."""

from __future__ import annotations

import pytest

from agent.faces.cli import main
from agent.faces.mcp_face import NEEDS_EXTRA
from agent.mcp.approvals import CURRENT_CALL, CallAsk, ClientCallApprover
from agent.mcp.desk import ApprovalDesk
from agent.safety.approvals import ApprovalRequest, Decision, fingerprint

STOP = {"host": "spark-a", "command": "docker stop vllm_node"}


def request(command: str = STOP["command"], id: str = "a1b2c3d4e5f6") -> ApprovalRequest:
    tool_input = {**STOP, "command": command}
    return ApprovalRequest(
        id=id,
        fingerprint=fingerprint("ssh_exec", tool_input, ["spark-a"]),
        tool="ssh_exec",
        input=tool_input,
        hosts=["spark-a"],
        risk="destructive",
        reason="'docker stop' stops a container",
    )


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


async def ask(approver, req, *, approval_id=None, principal="ops (local account)"):
    call = CallAsk(principal=principal, client="host 1", approval_id=approval_id)
    token = CURRENT_CALL.set(call)
    try:
        return await approver.decide(req), call
    finally:
        CURRENT_CALL.reset(token)


def approver(tmp_path, clock=None, decider=None) -> ClientCallApprover:
    return ClientCallApprover(
        ApprovalDesk(tmp_path / "desk"),
        session="s1",
        ttl_s=60,
        decider=decider,
        clock=clock or Clock(),
    )


def decide_at_desk(tmp_path, req: ApprovalRequest, kind="approved", **fields) -> None:
    ApprovalDesk(tmp_path / "desk").decide(
        req.id, Decision(kind=kind, fingerprint=req.fingerprint, decided_by="operator", **fields)
    )


async def test_a_question_waits_on_the_desk_and_its_decision_is_used_once(tmp_path):
    gate = approver(tmp_path)
    first = request()
    decision, call = await ask(gate, first)
    assert decision.kind == "pending" and call.pending[0].request is first
    assert [p.request.id for p in ApprovalDesk(tmp_path / "desk").waiting()] == [first.id]
    again, _ = await ask(gate, request(id="000000000001"), approval_id=first.id)
    assert again.kind == "pending"  # nobody decided yet
    decide_at_desk(tmp_path, first)
    collected, _ = await ask(gate, request(id="000000000002"), approval_id=first.id)
    assert collected.kind == "approved" and collected.decided_by == "operator"
    reused, call = await ask(gate, request(id="000000000003"), approval_id=first.id)
    assert reused.kind == "denied" and "used already" in reused.message and call.refused
    assert ApprovalDesk(tmp_path / "desk").waiting() == []


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"command": "docker stop --time=1 vllm_node"}, "another call"),
        ({"principal": "someone (local account)"}, "someone else"),
        ({"approval_id": "ffffffffffff"}, "no approval ffffffffffff"),
    ],
)
async def test_a_decision_authorises_nothing_but_its_own_call(tmp_path, change, words):
    gate = approver(tmp_path)
    first = request()
    await ask(gate, first)
    decide_at_desk(tmp_path, first)
    later = request(change.get("command", STOP["command"]), id="000000000009")
    decision, _ = await ask(
        gate,
        later,
        approval_id=change.get("approval_id", first.id),
        principal=change.get("principal", "ops (local account)"),
    )
    assert decision.kind == "denied" and words in decision.message


async def test_an_undecided_approval_expires(tmp_path):
    clock = Clock()
    gate = approver(tmp_path, clock)
    first = request()
    await ask(gate, first)
    clock.now = 61
    decide_at_desk(tmp_path, first)  # too late
    decision, _ = await ask(gate, request(id="000000000004"), approval_id=first.id)
    assert decision.kind == "timed_out"


async def test_a_webhook_that_fails_denies(tmp_path):
    class Broken:
        async def decide(self, req):
            raise ConnectionError("refused")

    gate = approver(tmp_path, decider=Broken())
    first = request()
    await ask(gate, first)
    await gate.approvals[first.id].asking  # the webhook is asked in the background
    decision, _ = await ask(gate, request(id="000000000005"), approval_id=first.id)
    assert decision.kind == "unavailable" and "refused" in decision.message


async def test_outside_an_mcp_call_nothing_is_approved(tmp_path):
    decision = await approver(tmp_path).decide(request())
    assert decision.kind == "unavailable"


def test_a_desk_id_cannot_name_a_file_outside_it(tmp_path):
    with pytest.raises(ValueError, match="not an approval id"):
        ApprovalDesk(tmp_path).answer("../../etc/passwd")


def test_without_the_extra_scout_mcp_says_how_to_install_it(monkeypatch, capsys):
    import agent.mcp.discovery as discovery

    monkeypatch.setattr(discovery, "sdk_version", lambda: None)
    assert main(["mcp", "--sim", "fresh-pair"]) == 1
    err = capsys.readouterr().err
    assert err == NEEDS_EXTRA + "\n" and "pip install 'scout-agent[mcp]'" in err
