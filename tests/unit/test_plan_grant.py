"""The grant of a plan approved with its steps: whole steps, in an order their needs allow, once.

Calls are given as what a tool declares it runs where ((host, command) pairs), as the gate gives
them; the grant never sees a tool's name.
"""

from __future__ import annotations

import itertools

from tools.plans.approval import StepApprovals
from tools.plans.plan import Plan, PlanStep


def plan_of(*steps: tuple[str, list[str]]) -> Plan:
    def one(n: int, host: str, actions: list[str]) -> PlanStep:
        return PlanStep(
            title=f"s{n}", hosts=[host], actions=actions, expected_downtime="none",
            rollback="r", success_check="c",
        )  # fmt: skip

    return Plan(goal="g", steps=[one(n, *step) for n, step in enumerate(steps, 1)])


PULL = ("spark-a", ["docker pull img"])
FETCH = ("spark-a", ["hf download m"])
COPY = ("spark-b", ["scp a b", "docker load"])
PLAN = plan_of(PULL, FETCH, COPY)
NEEDS = {1: [], 2: [], 3: [1, 2]}


def whole(step: tuple[str, list[str]]) -> list[tuple[str, str]]:
    host, actions = step
    return [(host, action) for action in actions]


def test_independent_steps_are_granted_at_once_and_a_step_waits_for_what_it_needs():
    grant = StepApprovals(PLAN, NEEDS)
    assert grant.take(whole(COPY)) is None  # needs 1 and 2
    assert grant.take(whole(FETCH)) == 2 and grant.take(whole(PULL)) == 1
    grant.settle(1, True)
    assert grant.take(whole(COPY)) is None
    grant.settle(2, True)
    assert grant.take(whole(COPY)) == 3
    grant.settle(3, True)
    assert all(grant.take(whole(s)) is None for s in (PULL, FETCH, COPY))  # each once


def test_a_free_form_plan_is_sequential():
    grant = StepApprovals(PLAN)
    assert grant.take(whole(FETCH)) is None
    assert grant.take(whole(PULL)) == 1


def test_anything_but_the_step_as_written_is_not_granted():
    variants = [
        [("spark-b", "docker pull img")],  # another host
        [("spark-a", "docker pull img:latest")],  # another tag
        [("spark-a", "docker pull img"), ("spark-a", "true")],  # one command more
        [],
        None,
    ]
    for call in variants:
        assert StepApprovals(PLAN, NEEDS).take(call) is None, call
    reordered = list(reversed(whole(COPY)))
    grant = StepApprovals(PLAN, NEEDS)
    grant.mark_passed([1, 2])
    assert grant.take(reordered) is None and grant.take(whole(COPY)) == 3


def test_a_failed_step_withdraws_every_approval_left():
    for first, second in itertools.permutations([PULL, FETCH]):
        grant = StepApprovals(PLAN, NEEDS)
        number = grant.take(whole(first))
        assert number is not None
        grant.settle(number, False)
        assert grant.withdrawn and grant.take(whole(second)) is None


def test_a_step_passed_another_way_is_used_up_and_unblocks_what_needs_it():
    grant = StepApprovals(PLAN, NEEDS)
    grant.mark_passed([1, 2])
    assert grant.take(whole(PULL)) is None
    assert grant.take(whole(COPY)) == 3


def test_one_action_at_a_time_still_works_for_single_commands():
    grant = StepApprovals(PLAN, NEEDS)
    grant.mark_passed([1, 2])
    assert grant.take([("spark-b", "docker load")]) is None  # not the next action
    assert grant.take([("spark-b", "scp a b")]) == 3
    assert grant.take([("spark-b", "docker load")]) is None  # its step call still runs
    grant.settle(3, True)
    assert grant.take([("spark-b", "docker load")]) == 3


def test_the_plans_proof_is_granted_once_and_only_after_every_step_passed():
    proof = plan_of(("spark-a", ["endpoint_check spark-a:8000 model=m"])).steps[0]
    grant = StepApprovals(PLAN.model_copy(update={"proof": proof}), NEEDS)
    check = [("spark-a", "endpoint_check spark-a:8000 model=m")]
    grant.mark_passed([1, 2])
    assert grant.take(check) is None  # step 3 has not passed
    grant.mark_passed([3])
    assert grant.take(check) == 4
    grant.settle(4, True)
    assert grant.take(check) is None
    assert StepApprovals(PLAN, NEEDS).take(check) is None  # a plan without a proof grants none
