"""Resume takes the session state back, but an approval only with the gate's recorded decision."""

from __future__ import annotations

from agent.loop.events import ApprovalDecisionEvent, SessionStart, StateChangeEvent
from agent.runtime.resume import rebuild
from tools.deploy.rollout.state import (
    DeploymentComputed,
    PlanApproved,
    RolloutProgress,
    SessionState,
    StepPassed,
)
from tools.deploy.steps import DeployStep, StepCheck
from tools.plans.plan import Plan

STEPS = [
    DeployStep(
        kind="stop",
        id="stop:spark-a:vllm_node",
        title="stop vllm_node to free its memory",
        host="spark-a",
        actions=["docker stop vllm_node"],
        check=StepCheck(host="spark-a", command="docker ps", description="it is gone"),
        rollback="docker start vllm_node",
    ),
    DeployStep(
        kind="link-up",
        id="link-up:spark-b",
        title="bring the RoCE link up",
        host="spark-b",
        actions=["sudo ip link set enp1s0f1np1 up"],
        check=StepCheck(host="spark-b", command="ibdev2netdev", description="it is Up"),
        rollback="sudo ip link set enp1s0f1np1 down",
    ),
]
PLAN = Plan(goal="serve the model", steps=[s.plan_step() for s in STEPS])


def _decision(kind: str = "approved", fingerprint: str | None = None) -> ApprovalDecisionEvent:
    return ApprovalDecisionEvent(
        call_id="plan", fingerprint=fingerprint or PLAN.digest(), decision=kind
    )


def _transcript(*middle) -> list:
    computed = DeploymentComputed(plan_hash=PLAN.digest(), steps=STEPS)
    return [
        SessionStart(model="claude-test"),
        StateChangeEvent(change=computed),
        *middle,
    ]


def _resumed_state(events) -> tuple[SessionState, list[str]]:
    rebuilt = rebuild(events)
    state = SessionState()
    state.restore(rebuilt.state_changes)
    return state, rebuilt.refused


def test_an_approval_with_its_recorded_decision_comes_back_with_the_rollout() -> None:
    approved = PlanApproved(plan_hash=PLAN.digest(), plan=PLAN)
    state, refused = _resumed_state(_transcript(_decision(), StateChangeEvent(change=approved)))
    assert refused == []
    assert state.plan.approved_hash == PLAN.digest()
    rollout = state.approved_rollout()
    assert rollout is not None and rollout.current == STEPS[0]


def test_an_approval_without_a_decision_is_not_restored() -> None:
    approved = PlanApproved(plan_hash=PLAN.digest(), plan=PLAN)
    for middle in ([], [_decision("denied")], [_decision(fingerprint="plan:other")]):
        state, refused = _resumed_state(_transcript(*middle, StateChangeEvent(change=approved)))
        assert state.plan.approved is None and state.approved_rollout() is None
        assert len(refused) == 1 and "holds no approval decision" in refused[0]


def test_an_edited_plan_under_an_approved_hash_is_not_restored() -> None:
    edited = PLAN.model_copy(update={"goal": "something else"})
    forged = PlanApproved(plan_hash=PLAN.digest(), plan=edited)
    state, refused = _resumed_state(_transcript(_decision(), StateChangeEvent(change=forged)))
    assert state.plan.approved is None
    assert "does not match its own hash" in refused[0]


def test_steps_that_differ_from_the_approved_plan_do_not_roll_out() -> None:
    state = SessionState()
    other = [STEPS[0].model_copy(update={"actions": ["docker rm -f vllm_node"]}), STEPS[1]]
    state.restore(
        [
            DeploymentComputed(plan_hash=PLAN.digest(), steps=other),
            PlanApproved(plan_hash=PLAN.digest(), plan=PLAN),
        ]
    )
    assert state.plan.approved_hash == PLAN.digest()
    assert state.approved_rollout() is None


def test_every_change_is_recorded_as_it_happens() -> None:
    recorded = []
    state = SessionState(record=recorded.append)
    state.add_deployment(PLAN, STEPS)
    state.approve_plan(PLAN)
    rollout = state.approved_rollout()
    assert rollout is not None
    rollout.record(rollout.steps[0], True)
    state.rollout_moved()
    assert [change.kind for change in recorded] == [
        "deployment_computed",
        "plan_approved",
        "rollout_progress",
    ]
    assert recorded[-1].position == 1 and recorded[-1].state == "running"


def test_a_rollout_whose_steps_passed_out_of_order_resumes_from_its_outcomes() -> None:
    """The two steps need nothing of each other: the second passed first (one batch); the
    resumed rollout knows which one, not just how many."""
    progress = RolloutProgress(
        plan_hash=PLAN.digest(),
        position=1,
        state="running",
        outcomes=[StepPassed(step_id="link-up:spark-b", ok=True)],
    )
    approved = PlanApproved(plan_hash=PLAN.digest(), plan=PLAN)
    state, _ = _resumed_state(
        _transcript(
            _decision(), StateChangeEvent(change=approved), StateChangeEvent(change=progress)
        )
    )
    rollout = state.approved_rollout()
    assert rollout is not None and rollout.current == STEPS[0]
    assert (rollout.why_not(STEPS[1]) or "").startswith("it has passed already.")
    assert rollout.why_not(STEPS[0]) is None and rollout.summary() == "1/2 steps done"
