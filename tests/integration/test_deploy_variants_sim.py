"""Variants of the seed story on the simulated cluster: the plan stops at the right finding."""

import pytest

from agent.loop.scripted_client import ScriptedClient
from agent.replay.redrive import sim_runtime
from agent.safety.approvers.scripted import ScriptedApprover
from tests.support.plans import one_step_plan
from tests.support.session_kit import text_turn, tool_turn

pytestmark = pytest.mark.slow

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"


async def plan_on(scenario, plan_input, *, prepare=()):
    """Recon, optional preparation commands, recon again, then plan_deployment: its result."""
    script = [tool_turn([("t1", "recon", {"hosts": "all", "model_size_gb": 119})])]
    script += [tool_turn([(f"p{i}", "ssh_exec", call)]) for i, call in enumerate(prepare)]
    if prepare:
        script.append(tool_turn([("t2", "recon", {"hosts": "all", "model_size_gb": 119})]))
    script += [tool_turn([("t3", "plan_deployment", plan_input)]), text_turn("done")]
    approver = ScriptedApprover([("approved", "")] * len(prepare), name="operator")
    client = ScriptedClient(script)
    async with sim_runtime(
        scenario, client=client, approver_factory=lambda rules: approver
    ) as runtime:
        if prepare:
            runtime.state.approve_plan(PREPARE_PLAN)
        await runtime.session.send("plan it")
    return client.requests[-1].messages[-1]["content"][0]


PREPARE_PLAN = one_step_plan(
    "try the worker's link",
    title="bring the link up",
    host="spark-b",
    actions=["sudo ip link set enp1s0f1np1 up"],
    rollback="sudo ip link set enp1s0f1np1 down",
    success_check="ibdev2netdev shows (Up)",
)
BASE = {"model": MODEL, "hosts": ["spark-a", "spark-b"], "model_size_gb": 119}


async def test_seed_pair_plan_frees_memory_and_fixes_the_link_first():
    result = await plan_on("seed-pair", BASE)
    assert not result.get("is_error")
    text = result["content"]
    assert text.index("docker stop vllm_node") < text.index("sudo ip link set enp1s0f1np1 up")
    assert text.index("sudo ip link set enp1s0f1np1 up") < text.index("vllm serve")


async def test_wrong_interface_is_refused_with_the_interfaces_that_exist():
    result = await plan_on("seed-pair", {**BASE, "fabric_interface": "eth9"})
    assert result["is_error"]
    assert "eth9" in result["content"]


async def test_not_enough_memory_even_across_both_nodes():
    result = await plan_on("healthy-pair", {**BASE, "model_size_gb": 300})
    assert "does not fit" in result["content"]


async def test_worker_unreachable_stops_the_plan():
    result = await plan_on("worker-down", BASE)
    assert result["is_error"]
    assert "spark-b did not answer" in result["content"]
    assert "cannot reach spark-b" in result["content"]


@pytest.mark.parametrize("scenario", ["roce-unfixable"])
async def test_roce_down_and_not_fixable_says_what_a_person_must_do(scenario):
    link_up = {"host": "spark-b", "command": "sudo ip link set enp1s0f1np1 up"}
    result = await plan_on(scenario, {**BASE, "links_tried": ["spark-b"]}, prepare=[link_up])
    assert result["is_error"]
    text = result["content"]
    assert "not fixable from here" in text and "cable" in text and "person" in text
