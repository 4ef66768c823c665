"""DESIGN rule 14: what Scout created itself is never a finding against it.

The world model remembers the containers Scout created (a plan step that creates one, a
docker_ctl run) by host and name, and marks them on every probe: the engine and the memory it
holds are then the plan's result, not a warning. A container of another name, or one of the
same name on another host, is still reported. A completed rollout's re-probe is one change, so
no finding is ever computed on the facts from before it.
"""

from __future__ import annotations

from agent.world.model import WorldModel
from agent.world.render import render_compact
from tests.support.sparks import VLLM_NODE, one_port_spark
from tools.checks import GB
from tools.deploy.choices import DeployChoices
from tools.deploy.launch.parts import container_step
from tools.deploy.rollout.order import StepOutcome
from tools.deploy.rollout.state import SessionState, StateChange
from tools.plans.plan import Plan
from tools.world.facts import Container, HostFacts

ENGINE = Container(
    name="scout-vllm",
    image="nvcr.io/nvidia/vllm:26.05-py3",
    state="running",
    status="Up 2 minutes",
    memory_bytes=105 * GB,
    memory_source="docker stats",
)


def served(host: str, *, available_gb: float) -> HostFacts:
    """A host as probed after the rollout: its own rows (each probe reads its own)."""
    containers = [ENGINE.model_copy(), VLLM_NODE.model_copy()]
    return one_port_spark(host, available_gb=available_gb, containers=containers)


def holders(world: WorldModel) -> list[str]:
    return [f.message for f in world.findings if f.kind == "container_holds_memory"]


def test_a_container_scout_created_holds_memory_without_a_warning() -> None:
    world = WorldModel()
    world.record_created("spark-a", "scout-vllm", "plan step 11")
    world.update("spark-a", served("spark-a", available_gb=22))
    world.update("spark-b", served("spark-b", available_gb=14))

    assert holders(world) == [
        "container vllm_node holds ~98 GB on spark-a",  # not Scout's: still a finding
        "container scout-vllm holds ~105 GB on spark-b",  # Scout created none there
        "container vllm_node holds ~98 GB on spark-b",
    ]
    engine = world.hosts["spark-a"].docker.containers[0]
    assert engine.started_by_scout == "plan step 11"
    assert "scout-vllm [nvcr.io/nvidia/vllm:26.05-py3] Up 2 minutes (started by Scout: plan " \
        "step 11), holds ~105 GB" in render_compact(world, ["spark-a"])  # fmt: skip


def test_every_recipes_engine_container_step_says_it_creates_its_container() -> None:
    choices = DeployChoices(model="Qwen/Qwen3.5-122B-A10B-FP8", hosts=["spark-a"]).model_copy(
        update={"container": "my-engine"}
    )
    step = container_step(choices, "spark-a", {}, [])
    assert step.creates == "my-engine" and "--name my-engine" in step.actions[0]


def test_placing_the_model_is_one_change_on_fresh_facts() -> None:
    seen: list[list[str]] = []
    world = WorldModel(on_change=lambda host, summary, new: seen.append([f.message for f in new]))
    world.update("spark-a", one_port_spark("spark-a", available_gb=29, containers=[VLLM_NODE]))
    world.update("spark-b", one_port_spark("spark-b", available_gb=118))
    world.set_model_size(119 * GB)
    world.record_created("spark-a", "scout-vllm", "plan step 11")
    world.record_created("spark-b", "scout-vllm", "plan step 9")
    seen.clear()

    after = {h: one_port_spark(h, available_gb=gb, containers=[ENGINE.model_copy()]) for h, gb
             in (("spark-a", 22), ("spark-b", 14))}  # fmt: skip
    world.placed(after, {})

    assert len(seen) == 1  # one world update, on the facts as probed now
    assert seen[0] == [
        "spark-a: 22 GB available for a model (unified memory)",
        "spark-b: 14 GB available for a model (unified memory)",
    ]
    assert world.model_size_bytes is None


def test_a_resumed_session_knows_again_which_containers_its_passed_steps_created() -> None:
    choices = DeployChoices(model="Qwen/Qwen3.5-122B-A10B-FP8", hosts=["spark-a", "spark-b"])
    choices = choices.model_copy(update={"container": "scout-vllm"})
    steps = [container_step(choices, "spark-b", {}, []), container_step(choices, "spark-a", {}, [])]
    recorded: list[StateChange] = []
    live = SessionState(record=recorded.append)
    plan = Plan(goal="serve the model", steps=[s.plan_step() for s in steps])
    live.add_deployment(plan, steps)
    live.approve_plan(plan)
    rollout = live.approved_rollout()
    assert rollout is not None
    rollout.outcomes.append(StepOutcome(steps[0].id, True, ""))  # spark-b's passed, not spark-a's
    live.rollout_moved()

    resumed = SessionState()
    resumed.restore(recorded)
    assert resumed.created_containers() == [("spark-b", "scout-vllm", "plan step 1")]
