"""plan_deployment on seed-pair-like facts, its variants, and the rollout state machine."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent.world.model import WorldModel
from tests.support.sparks import reference_pair, seed_pair, spark
from tools.base import ToolContext
from tools.deploy.rollout.order import OrderError, Rollout, drive, order_steps, run_step
from tools.deploy.rollout.state import SessionState
from tools.deploy.steps import DeployStep, StepCheck
from tools.plan_deployment import PlanDeploymentInput, PlanDeploymentTool
from tools.plans.plan import Plan
from tools.recon.image_probe import contents_command
from tools.ssh import Inventory, SSHPool

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
CACHE = "~/.cache/huggingface/hub/models--Qwen--Qwen3.5-122B-A10B-FP8"
# The facts are in the world model already: a pool over no host, so nothing is re-probed.
NO_HOSTS = SSHPool(Inventory(hosts={}))


async def plan_for(hosts, tmp_path: Path, unreachable=None, **options):
    world = WorldModel()
    world.apply_round(hosts, unreachable or {})
    tool = PlanDeploymentTool(SessionState(), NO_HOSTS, max_age_s=10**9)
    params = PlanDeploymentInput(
        model=MODEL, hosts=["spark-a", "spark-b"], model_size_gb=119, **options
    )
    return await tool.run(params, ToolContext(spill_dir=tmp_path, world=world))


async def test_seed_pair_plan_stops_vllm_node_and_raises_roce_before_the_recipe(
    tmp_path: Path,
) -> None:
    result = await plan_for(seed_pair(), tmp_path)
    assert not result.is_error, result.text
    plan = Plan.model_validate(result.data["plan"])
    titles = [s.title for s in plan.steps]
    assert titles[:2] == [
        "stop vllm_node to free its memory",
        "bring the RoCE link up (enp1s0f1np1, enP2p1s0f1np1)",
    ]
    assert plan.steps[0].actions == ["docker stop vllm_node"]
    assert plan.steps[0].rollback == "docker start vllm_node"
    assert plan.steps[1].actions == [
        "sudo ip link set enp1s0f1np1 up",
        "sudo ip link set enP2p1s0f1np1 up",
    ]
    rest = titles[2:]
    asked = "ask nvcr.io/nvidia/vllm:26.05-py3 what it runs (as job image-check)"
    assert rest[:5] == [
        f"download {MODEL} into spark-a's HF cache (as job download-weights)",
        asked,  # recon saw no image ID here: each node's copy is asked
        asked,
        "copy the weights to spark-b over the fabric (enp1s0f1np1) (as job copy-weights-spark-b)",
        "measure the fabric: all_gather_perf over 2 nodes (spark-b's address read when it runs) "
        "(as job fabric-test)",
    ]
    # spark-b's link is down while planning: its fabric address is read when each step runs,
    # from the head over ssh (no inventory here: by its name)
    lookup = (
        "$(ssh spark-b ip -4 -br addr show dev enp1s0f1np1 | grep -oE '[0-9]+([.][0-9]+){3}' "
        "| head -n 1)"
    )
    assert plan.steps[3].actions == [contents_command(["nvcr.io/nvidia/vllm:26.05-py3"])]
    assert plan.steps[3].success_check.endswith("→ the image holds vllm")
    assert plan.steps[5].actions[0].endswith(f" {lookup}:{CACHE}/")
    assert plan.steps[6].actions[0].startswith(f"mpirun -np 2 -H 192.168.100.10:1,{lookup}:1 ")
    ray = "install Ray into scout-vllm, as NVIDIA's playbook does for its image without Ray"
    assert rest[5:] == [
        "start the engine container scout-vllm",
        ray,
        "start the Ray head",
        "start the engine container scout-vllm",
        ray,
        "join the Ray cluster",
        f"serve {MODEL} with vLLM TP=2 (as job scout-serve)",
    ]
    assert "Ray: not known to be in nvcr.io/nvidia/vllm:26.05-py3" in plan.goal
    assert "does not fit until vllm_node is stopped" in result.text
    assert any("fabric address of spark-b unknown" in risk for risk in plan.risks)


async def test_healthy_pair_plan_is_only_the_recipe(tmp_path: Path) -> None:
    result = await plan_for(reference_pair(), tmp_path, recipe="sglang")
    plan = Plan.model_validate(result.data["plan"])
    assert not result.is_error
    titles = [s.title for s in plan.steps]
    asked = "ask lmsysorg/sglang:latest-cu130 what it runs (as job image-check)"
    assert titles[:5] == [
        f"download {MODEL} into spark-a's HF cache (as job download-weights)",
        asked,
        asked,
        "copy the weights to spark-b over the fabric (enp1s0f1np1) (as job copy-weights-spark-b)",
        "measure the fabric: all_gather_perf over 2 nodes (as job fabric-test)",
    ]
    assert plan.steps[1].success_check.endswith("→ the image holds sglang")
    assert [s.hosts for s in plan.steps[5:]] == [["spark-b"], ["spark-b"], ["spark-a"], ["spark-a"]]


async def test_roce_not_fixable_says_what_a_person_must_do(tmp_path: Path) -> None:
    result = await plan_for(seed_pair(), tmp_path, links_tried=["spark-b"])
    assert result.is_error
    assert result.text.startswith(
        "The plan cannot succeed until these are done (not fixable from here):\n"
        "- spark-b's RoCE link (enp1s0f1np1) stays down after `ip link set … up` → reseat the "
        "QSFP cable"
    )
    plan = Plan.model_validate(result.data["plan"])
    assert any(
        s.title.startswith("by hand: reseat the QSFP cable") and s.hosts == ["spark-b"]
        for s in plan.steps
    )


async def test_wrong_interface_is_an_error_naming_the_right_one(tmp_path: Path) -> None:
    hosts = {
        "spark-a": spark("spark-a", 10, cage="f0np0"),
        "spark-b": spark("spark-b", 11, cage="f0np0"),
    }
    result = await plan_for(hosts, tmp_path, fabric_interface="enp1s0f1np1")
    assert result.is_error
    assert "use fabric_interface=enp1s0f0np0 or leave it unset" in result.text


async def test_worker_unreachable_is_an_error(tmp_path: Path) -> None:
    hosts = {"spark-a": reference_pair()["spark-a"]}
    result = await plan_for(hosts, tmp_path, unreachable={"spark-b": "No route to host"})
    assert result.is_error
    assert result.text.startswith("Cannot plan this deployment yet:\n- spark-b did not answer")


async def test_model_too_big_is_an_error(tmp_path: Path) -> None:
    world = WorldModel()
    world.apply_round(reference_pair(), {})
    params = PlanDeploymentInput(model=MODEL, hosts=["spark-a", "spark-b"], model_size_gb=240)
    result = await PlanDeploymentTool(SessionState(), NO_HOSTS, max_age_s=10**9).run(
        params, ToolContext(spill_dir=tmp_path, world=world)
    )
    assert result.is_error
    assert (
        "does not fit on this node → use more nodes or a smaller (quantised) model" in result.text
    )


def step(step_id: str, needs: list[str] | None = None, expect: str = "ok") -> DeployStep:
    return DeployStep(
        kind="container",
        id=step_id,
        title=step_id,
        host="h",
        actions=[f"do {step_id}"],
        check=StepCheck(
            host="h", command=f"check {step_id}", expect=expect, description=f"{step_id} ok"
        ),
        rollback=f"undo {step_id}",
        needs=needs or [],
    )


def test_order_puts_needs_first_and_rejects_cycles() -> None:
    ordered = order_steps([step("head", ["worker"]), step("worker")])
    assert [s.id for s in ordered] == ["worker", "head"]
    with pytest.raises(OrderError, match="cycle"):
        order_steps([step("a", ["b"]), step("b", ["a"])])
    with pytest.raises(OrderError, match="unknown"):
        order_steps([step("a", ["nope"])])


async def test_failed_check_stops_and_offers_that_steps_rollback() -> None:
    ran: list[str] = []

    async def run(host: str, command: str) -> tuple[int, str]:
        ran.append(command)
        return 0, "not yet" if command == "check second" else "ok"

    rollout = await drive(Rollout([step("first"), step("second"), step("third")]), run)
    assert rollout.state == "failed"
    assert ran == ["do first", "check first", "do second", "check second"]
    assert rollout.next_action() == "undo second"
    assert rollout.summary() == (
        "stopped at step 2/3 (second): second ok did not hold. Proposed rollback on h: undo second"
    )


async def test_all_checks_pass_completes() -> None:
    async def run(host: str, command: str) -> tuple[int, str]:
        return 0, "ok"

    rollout = await drive(Rollout([step("a"), step("b", ["a"])]), run)
    assert rollout.state == "done" and rollout.next_action() is None
    assert rollout.summary() == "2/2 steps done — rollout complete"


async def test_independent_steps_run_together_and_a_step_waits_for_what_it_needs() -> None:
    """pull and download need nothing: both may run at once; copy needs the download."""
    rollout = Rollout([step("pull"), step("download"), step("copy", ["download"])])
    pull, download, copy = rollout.steps
    assert [s.id for s in rollout.runnable()] == ["pull", "download"]
    release = asyncio.Event()
    ran: list[str] = []

    async def run(host: str, command: str) -> tuple[int, str]:
        ran.append(command)
        if command == "do download":
            await release.wait()
        return 0, "ok"

    slow = asyncio.create_task(run_step(rollout, run, step=download))
    await asyncio.sleep(0)  # the download has started and waits
    assert rollout.why_not(copy) == (
        "it needs step 2 (download, running) to pass first; steps that do not need each other "
        "may run in one batch. Steps that may run now: 1 (pull)."
    )
    assert rollout.why_not(download) == (
        "it is running already (its result comes with the call that started it)."
    )
    assert rollout.current is pull  # the first step neither passed nor started
    await run_step(rollout, run, step=pull)
    assert rollout.why_not(pull) == "it has passed already."
    release.set()
    await slow
    assert rollout.why_not(copy) is None and rollout.position == 2
    await run_step(rollout, run, step=copy)
    assert rollout.state == "done" and rollout.summary() == "3/3 steps done — rollout complete"
    assert ran[:2] == ["do download", "do pull"]


async def test_a_failure_stops_new_steps_while_a_running_one_finishes() -> None:
    rollout = Rollout([step("pull", expect="never"), step("download"), step("copy")])
    pull, download, copy = rollout.steps
    release = asyncio.Event()

    async def run(host: str, command: str) -> tuple[int, str]:
        if command == "do download":
            await release.wait()
        return 0, "ok"

    slow = asyncio.create_task(run_step(rollout, run, step=download))
    await asyncio.sleep(0)
    assert not (await run_step(rollout, run, step=pull)).ok
    assert rollout.state == "failed" and rollout.runnable() == [] and rollout.current is None
    assert (rollout.why_not(copy) or "").startswith("the rollout stopped at a failed step.")
    release.set()
    assert (await slow).ok  # recorded, but the rollout stays stopped at the failed step
    assert rollout.state == "failed" and rollout.failed_step is pull
    assert rollout.summary().startswith("stopped at step 1/3 (pull): pull ok did not hold.")
    assert rollout.next_action() == "undo pull"
