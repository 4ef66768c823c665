"""tools/deploy/plan/evictions.py: a new plan that would end a recorded deployment says so, and
plan_deployment adds the line to the plan's risks when the session lends it the records."""

from __future__ import annotations

from pathlib import Path

from agent.world.model import WorldModel
from tests.support.no_hosts import no_hosts
from tests.support.sparks import seed_pair
from tools.base import ToolContext
from tools.deploy.plan.evictions import Recorded, eviction_risks
from tools.deploy.rollout.state import SessionState
from tools.deploy.steps import DeployStep, StepCheck
from tools.plan_deployment import PlanDeploymentInput, PlanDeploymentTool
from tools.plans.plan import Plan

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
NO_HOSTS = no_hosts()
OLD = Recorded(
    id="old@spark-a-8000",
    model="old/model",
    host="spark-a",
    port=8000,
    containers=(("spark-a", "vllm_node"), ("spark-b", "scout-vllm")),
)


def step(title: str, host: str, action: str) -> DeployStep:
    check = StepCheck(host=host, command="true", expect="ok", description="ok")
    return DeployStep(
        kind="container", id=title, title=title, host=host, actions=[action], check=check,
        rollback="none",
    )  # fmt: skip


def test_a_step_on_a_recorded_container_evicts_its_deployment() -> None:
    [line] = eviction_risks([step("stop it", "spark-a", "docker stop vllm_node")], [OLD])
    assert line.startswith("evicts the recorded deployment old@spark-a-8000 (old/model at ")
    assert "step 'stop it' on spark-a acts on its container vllm_node" in line


def test_serving_on_a_recorded_endpoint_evicts_it() -> None:
    serve = step("serve", "spark-a", "docker exec x vllm serve m --port 8000")
    [line] = eviction_risks([serve], [OLD])
    assert "serves on its endpoint spark-a:8000" in line


def test_another_host_a_longer_name_or_another_port_evict_nothing() -> None:
    steps = [
        step("same name elsewhere", "spark-c", "docker stop vllm_node"),
        step("a longer name", "spark-a", "docker stop vllm_node-2"),
        step("another port", "spark-a", "vllm serve m --port 80001"),
    ]
    assert eviction_risks(steps, [OLD]) == []


async def test_plan_deployment_names_the_recorded_deployment_it_would_end(tmp_path: Path) -> None:
    world = WorldModel()
    world.apply_round(seed_pair(), {})
    params = PlanDeploymentInput(model=MODEL, hosts=["spark-a", "spark-b"], model_size_gb=119)
    context = ToolContext(spill_dir=tmp_path, world=world)
    plain = await PlanDeploymentTool(SessionState(), NO_HOSTS, max_age_s=10**9).run(params, context)
    lent = PlanDeploymentTool(SessionState(), NO_HOSTS, max_age_s=10**9, recorded=lambda: [OLD])
    checked = await lent.run(params, context)
    plain_risks = Plan.model_validate(plain.data["plan"]).risks
    risks = Plan.model_validate(checked.data["plan"]).risks
    assert [r for r in risks if r not in plain_risks] == [
        "evicts the recorded deployment old@spark-a-8000 (old/model at spark-a:8000): step "
        "'stop vllm_node to free its memory' on spark-a acts on its container vllm_node; "
        "`scout status` shows it"
    ]
    assert "evicts the recorded deployment old@spark-a-8000" in checked.text
