"""Approve once, exactly: a plan approved with its steps runs them on the sim without a prompt.

The model is scripted (real SDK against the replay server); the tools run for real against the
simulated pair over SSH. The operator is a scripted approver that approves the plan *with its
steps*; any further question it gets is recorded in `seen`.
"""

from __future__ import annotations

from agent.replay.redrive import sim_runtime
from agent.safety.approvers.scripted import ScriptedApprover
from agent.standin.server import MessagesAPIServer
from tests.support.session_kit import sdk_client, text_turn, tool_turn

STOP = "docker stop vllm_node"
LINK_UP = "sudo ip link set enp1s0f1np1 up"
PLAN = {
    "goal": "free the head's memory and bring the worker's RoCE link up",
    "steps": [
        {
            "title": "stop the old vLLM container",
            "hosts": ["spark-a"],
            "actions": [STOP],
            "expected_downtime": "the old endpoint stops",
            "rollback": "docker start vllm_node",
            "success_check": "docker ps shows vllm_node exited",
        },
        {
            "title": "bring enp1s0f1np1 up",
            "hosts": ["spark-b"],
            "actions": [LINK_UP],
            "expected_downtime": "none",
            "rollback": "sudo ip link set enp1s0f1np1 down",
            "success_check": "ibdev2netdev shows enp1s0f1np1 (Up)",
        },
    ],
}
WITH_STEPS = {"kind": "approved", "message": "", "approve_steps": True}


async def run_session(link_command: str, answers: list) -> tuple[dict, ScriptedApprover]:
    script = [
        tool_turn([("plan", "propose_plan", PLAN)]),
        tool_turn([("stop", "ssh_exec", {"host": "spark-a", "command": STOP})]),
        tool_turn([("link", "ssh_exec", {"host": "spark-b", "command": link_command})]),
        tool_turn(
            [
                (
                    "look",
                    "ssh_exec",
                    {"host": "spark-a", "command": "docker ps -a --format '{{.Names}} {{.State}}'"},
                )
            ]
        ),
        text_turn("done"),
    ]
    approver = ScriptedApprover(answers, name="operator")
    with MessagesAPIServer(script) as api:
        async with sim_runtime(
            "seed-pair", client=sdk_client(api.url), approver_factory=lambda gate: approver
        ) as runtime:
            await runtime.session.send("free the head and fix the link")
        posts = [r.body for r in api.requests if r.path == "/v1/messages"]
    results = {}
    for body in posts:
        for block in body["messages"][-1]["content"]:
            if block.get("type") == "tool_result":
                results[block["tool_use_id"]] = block
    return results, approver


async def test_steps_approved_with_the_plan_run_without_another_prompt():
    results, approver = await run_session(LINK_UP, [WITH_STEPS])
    assert [request.tool for request in approver.seen] == ["propose_plan"]
    for call in ("plan", "stop", "link"):
        assert not results[call].get("is_error"), results[call]["content"]
    assert "vllm_node exited" in results["look"]["content"]


async def test_a_step_changed_by_one_flag_asks_for_that_call():
    changed = f"{LINK_UP} mtu 9000"
    results, approver = await run_session(changed, [WITH_STEPS, ("approved", "ok")])
    asked = [request for request in approver.seen if request.tool == "ssh_exec"]
    assert [request.input["command"] for request in asked] == [changed]
    assert asked[0].plan_step is None  # it is no step of the plan as written
    assert not results["stop"].get("is_error") and not results["link"].get("is_error")
