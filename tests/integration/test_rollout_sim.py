"""rollout_step on the simulated cluster: the approved plan, one proven step at a time."""

from agent.loop.scripted_client import ScriptedClient
from agent.loop.transcript import read_transcript
from agent.replay.redrive import sim_runtime
from agent.safety.approvers.scripted import ScriptedApprover
from tests.support.session_kit import text_turn, tool_turn

PLAN_INPUT = {
    "model": "Qwen/Qwen3.5-122B-A10B-FP8",
    "hosts": ["spark-a", "spark-b"],
    "model_size_gb": 119,
}


async def _rollout(scenario, steps_to_run, plan):
    script = [
        tool_turn([("r", "recon", {"hosts": "all"})]),
        tool_turn([("p", "plan_deployment", PLAN_INPUT)]),
        tool_turn([("a", "propose_plan", plan)]),
    ]
    patient = {"check_attempts": 20, "check_interval_s": 0.3}
    script += [
        tool_turn([(call_id, "rollout_step", {"step": n, **patient})])
        for call_id, n in steps_to_run
    ]
    script.append(text_turn("done"))
    approver = ScriptedApprover([("approved", "")] * 20, name="operator")
    client = ScriptedClient(script)
    async with sim_runtime(
        scenario, client=client, approver_factory=lambda gate: approver
    ) as runtime:
        await runtime.session.send("deploy")
    results = {}
    for request in client.requests:
        for block in request.messages[-1]["content"]:
            if block.get("type") == "tool_result":
                results[block["tool_use_id"]] = block
    return results, approver


async def _computed_plan(scenario):
    script = [
        tool_turn([("r", "recon", {"hosts": "all"})]),
        tool_turn([("p", "plan_deployment", PLAN_INPUT)]),
        text_turn("ok"),
    ]
    async with sim_runtime(
        scenario, client=ScriptedClient(script), approver_factory=lambda gate: None
    ) as runtime:
        await runtime.session.send("plan")
        events = read_transcript(runtime.transcript_path).events
    return next(e for e in events if e.type == "tool_result" and e.id == "p").data["plan"]


async def test_the_whole_plan_rolls_out_step_by_step():
    plan = await _computed_plan("seed-pair")
    steps = len(plan["steps"])
    calls = [("s1", 1), ("early", 3), *((f"s{n}", n) for n in range(2, steps + 1))]
    results, approver = await _rollout("seed-pair", calls, plan)
    assert "Plan approved" in results["a"]["content"]
    early = results["early"]
    assert early["is_error"] and "steps run in order and step 2" in early["content"]
    for n in range(1, steps + 1):
        assert not results[f"s{n}"].get("is_error"), results[f"s{n}"]["content"]
    assert "The rollout is complete" in results[f"s{steps}"]["content"]
    destructive = [r for r in approver.seen if r.risk == "destructive"]
    assert destructive and "docker stop vllm_node" in destructive[0].summary


async def test_a_failed_check_stops_the_rollout_and_names_the_rollback():
    plan = await _computed_plan("seed-pair-no-model")
    steps = len(plan["steps"])
    calls = [(f"s{n}", n) for n in range(1, steps + 1)]
    results, _ = await _rollout("seed-pair-no-model", calls, plan)
    failed = [n for n in range(1, steps + 1) if results[f"s{n}"].get("is_error")]
    assert failed, "some step must fail without the weights on spark-b"
    first = results[f"s{failed[0]}"]["content"]
    assert "failed" in first and "Proposed rollback" in first and "docker rm -f scout-vllm" in first
    if len(failed) > 1:
        assert "The rollout stopped at a failed step" in results[f"s{failed[1]}"]["content"]
