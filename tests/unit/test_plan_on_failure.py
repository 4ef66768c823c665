"""A plan that names its rollback (`Plan.on_failure`): approved with its steps, the first failure
turns the grant to exactly that rollback, in order; a second failure, or a call whose effect is
unknown, leaves nothing granted. A plan without one hashes and dumps as before."""

from __future__ import annotations

import hashlib
import json

from tools.plans.approval import StepApprovals
from tools.plans.plan import Plan, PlanStep


def step(title: str, host: str, *actions: str) -> PlanStep:
    return PlanStep(
        title=title, hosts=[host], actions=list(actions), expected_downtime="none",
        rollback="the plan's rollback", success_check="c",
    )  # fmt: skip


PROOF = step("prove", "spark-a", "endpoint_check spark-a:8000")
FORWARD = [
    step("retire", "spark-a", "docker rm -f scout-vllm"),
    step("new engine", "spark-a", "docker run -d --name scout-vllm new"),
]
BACK = [
    step("clear", "spark-a", "docker rm -f scout-vllm"),
    step("old engine", "spark-a", "docker run -d --name scout-vllm old"),
    PROOF,
]
PLAN = Plan(goal="upgrade", steps=FORWARD, proof=PROOF, on_failure=BACK)


def call(plan_step: PlanStep) -> list[tuple[str, str]]:
    return [(plan_step.hosts[0], action) for action in plan_step.actions]


def test_a_failed_step_grants_the_named_rollback_in_order_and_nothing_else():
    grant = StepApprovals(PLAN)
    assert grant.take(call(BACK[1])) is None  # no rollback before a failure
    first = grant.take(call(FORWARD[0]))
    assert first == 1
    grant.settle(first, ok=True)
    second = grant.take(call(FORWARD[1]))
    grant.settle(second, ok=False)
    assert grant.withdrawn is None and grant.rolling_back == "step 2 failed"
    assert grant.take(call(PROOF)) is None  # the rollback's proof waits for its steps
    assert grant.take(call(BACK[1])) is None  # in order: clearing comes first
    numbers = [grant.take(call(s)) for s in BACK[:1]]
    grant.settle(numbers[0], ok=True)
    assert [PLAN.numbered(n)[0] for n in numbers] == ["rollback step 1"]
    engine = grant.take(call(BACK[1]))
    grant.settle(engine, ok=True)
    assert PLAN.numbered(grant.take(call(PROOF)))[0] == "rollback step 3"
    assert grant.take(call(FORWARD[1])) is None  # the forward step is not granted again


def test_a_failure_during_the_rollback_withdraws_everything():
    grant = StepApprovals(PLAN)
    grant.withdraw("the proof failed")  # a failure the gate did not see, ended by its runner
    clear = grant.take(call(BACK[0]))
    grant.settle(clear, ok=False)
    assert grant.withdrawn == f"step {clear} failed"
    assert grant.take(call(BACK[1])) is None


def test_a_call_whose_effect_is_unknown_grants_no_rollback():
    grant = StepApprovals(PLAN)
    grant.withdraw("the session stopped in the middle of step 2", roll_back=False)
    assert grant.rolling_back is None and grant.withdrawn
    assert all(grant.take(call(s)) is None for s in BACK)


def test_a_plan_without_a_rollback_hashes_as_plans_did_before():
    plan = Plan(goal="g", steps=FORWARD, risks=["r"])
    before = {"goal": "g", "steps": [s.model_dump(mode="json") for s in FORWARD], "risks": ["r"],
              "proof": None}  # fmt: skip
    body = json.dumps(before, sort_keys=True, separators=(",", ":"))
    assert plan.digest() == "plan:" + hashlib.sha256(body.encode()).hexdigest()[:16]
    assert "on_failure" not in plan.model_dump()
    assert PLAN.digest() != Plan(goal="upgrade", steps=FORWARD, proof=PROOF).digest()


def test_the_plan_shows_its_rollback_to_the_person_approving_it():
    shown = PLAN.render()
    assert "run at once to roll back (approved with the steps, nothing more is asked)" in shown
    assert "  R2. old engine on spark-a\n     $ docker run -d --name scout-vllm old" in shown
