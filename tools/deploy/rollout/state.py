"""What a session decided and computed that outlives one call, in one object outside the tools.

The plans (the latest proposal, the approved one), the deployments plan_deployment computed
(keyed by their plan's hash) and how far each rollout got. Every change is handed to `record`
as a typed StateChange, which the agent writes to the transcript; `restore` replays recorded
changes when a session resumes. Whether a recorded approval may be restored at all is decided by
the agent (agent/runtime/resume.py), which checks it against the recorded approval decision.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from tools.deploy.rollout.order import Rollout, RolloutState, StepOutcome
from tools.deploy.steps import DeployStep
from tools.plans.approval import PlanState, StepApprovals
from tools.plans.plan import Plan


class DeploymentComputed(BaseModel):
    """plan_deployment computed these steps; the plan made of them has `plan_hash`."""

    kind: Literal["deployment_computed"] = "deployment_computed"
    plan_hash: str
    steps: list[DeployStep]
    plan: Plan | None = None


class PlanApproved(BaseModel):
    """A person approved this plan (the transcript holds the decision just before);
    `with_steps`: and each of its steps' calls as written (tools/plans/approval.py)."""

    kind: Literal["plan_approved"] = "plan_approved"
    plan_hash: str
    plan: Plan
    with_steps: bool = False


class StepPassed(BaseModel):
    step_id: str
    ok: bool


class RolloutProgress(BaseModel):
    """Where the rollout of the deployment with `plan_hash` stands after a step: `outcomes`
    name the steps that passed or failed (steps may pass out of plan order when independent);
    `position` counts those that passed."""

    kind: Literal["rollout_progress"] = "rollout_progress"
    plan_hash: str
    position: int = Field(ge=0)
    state: RolloutState
    outcomes: list[StepPassed] = Field(default_factory=list)


StateChange = Annotated[
    DeploymentComputed | PlanApproved | RolloutProgress, Field(discriminator="kind")
]
StateRecorder = Callable[[StateChange], object]
DAY_TWO = "day-two"  # the key of the engine steps an upgrade runs (never a plan's hash)


class SessionState:
    """The session's plans, computed deployments and rollouts; every change is recorded."""

    def __init__(self, record: StateRecorder | None = None) -> None:
        self.plan = PlanState()
        self.deployments: dict[str, list[DeployStep]] = {}
        self.computed: dict[str, Plan] = {}
        self.rollouts: dict[str, Rollout] = {}
        # "host:port" → how its engine came up (readiness.py), for the proof's report
        self.readiness: dict[str, dict[str, object]] = {}
        self._record: StateRecorder = record or (lambda change: None)

    def approve_plan(self, plan: Plan, with_steps: bool = False) -> None:
        self._apply(PlanApproved(plan_hash=plan.digest(), plan=plan, with_steps=with_steps))

    def offer(self, plan: Plan) -> str:
        """A plan Scout made itself (day two's upgrade, from the deployment record), proposable
        by its hash as a computed one is: the person sees Scout's copy, nothing retyped."""
        digest = plan.digest()
        self.computed[digest] = plan
        return digest

    def serving(self, steps: list[DeployStep]) -> None:
        """The engine steps now running outside a computed rollout (day two's upgrade, or its
        rollback): the proof's fingerprint finds their serve command here. No plan is made of
        them, and each call replaces the last."""
        self.deployments[DAY_TWO] = list(steps)

    def add_deployment(self, plan: Plan, steps: list[DeployStep]) -> None:
        self._apply(DeploymentComputed(plan_hash=plan.digest(), steps=steps, plan=plan))

    def step_needs(self, plan: Plan) -> dict[int, list[int]] | None:
        """Which steps each step of a computed plan needs, by number; None for a plan that
        plan_deployment did not compute (its steps are then sequential)."""
        steps = self.deployments.get(plan.digest())
        if steps is None or [step.plan_step() for step in steps] != plan.steps:
            return None
        numbers = {step.id: number for number, step in enumerate(steps, 1)}
        return {
            number: [numbers[need] for need in step.needs if need in numbers]
            for number, step in enumerate(steps, 1)
        }

    def approved_rollout(self) -> Rollout | None:
        """The rollout of the approved plan, if plan_deployment computed exactly that plan."""
        digest = self.plan.approved_hash
        approved = self.plan.approved
        steps = self.deployments.get(digest or "")
        if approved is None or digest is None or steps is None:
            return None
        if [step.plan_step() for step in steps] != approved.steps:
            return None  # the steps to run are not the ones a person approved
        if digest not in self.rollouts:
            self.rollouts[digest] = Rollout(list(steps))
        return self.rollouts[digest]

    def rollout_moved(self) -> None:
        """Record where the approved plan's rollout stands now (after a step ran)."""
        digest = self.plan.approved_hash
        rollout = self.rollouts.get(digest or "")
        if digest is None or rollout is None:
            return
        outcomes = [StepPassed(step_id=o.step_id, ok=o.ok) for o in rollout.outcomes]
        self._grant_follows(rollout)
        self._record(
            RolloutProgress(
                plan_hash=digest, position=rollout.position, state=rollout.state, outcomes=outcomes
            )
        )

    def created_containers(self) -> list[tuple[str, str, str]]:
        """(host, container, which step) for each container a passed rollout step created:
        what a resumed session's world model knows again as Scout's own."""
        return [
            (step.host, step.creates, f"plan step {rollout.number(step)}")
            for rollout in self.rollouts.values()
            for step in rollout.steps
            if step.creates and step.id in rollout.passed
        ]

    def restore(self, changes: Iterable[StateChange]) -> None:
        """Take recorded changes back, in order, without recording them again."""
        for change in changes:
            if isinstance(change, RolloutProgress):
                self._restore_rollout(change)
            elif not isinstance(change, PlanApproved) or change.plan.digest() == change.plan_hash:
                self._take(change)

    def _apply(self, change: DeploymentComputed | PlanApproved) -> None:
        self._take(change)
        self._record(change)

    def _take(self, change: DeploymentComputed | PlanApproved) -> None:
        if isinstance(change, PlanApproved):
            needs = self.step_needs(change.plan)
            grant = StepApprovals(change.plan, needs) if change.with_steps else None
            self.plan.approve(change.plan, grant)
        else:
            self.deployments[change.plan_hash] = list(change.steps)
            if change.plan is not None:
                self.computed[change.plan_hash] = change.plan

    def _grant_follows(self, rollout: Rollout) -> None:
        """The grant counts the rollout's passed steps as used (however they were approved),
        and a failed step withdraws what is left of it."""
        grant = self.plan.grant
        if grant is None:
            return
        grant.mark_passed(
            [rollout.number(step) for step in rollout.steps if step.id in rollout.passed]
        )
        if rollout.state == "failed" and not grant.withdrawn:
            grant.withdraw("the rollout stopped at a failed step")

    def _restore_rollout(self, change: RolloutProgress) -> None:
        steps = self.deployments.get(change.plan_hash)
        if steps is None or change.position > len(steps):
            return
        rollout = Rollout(list(steps))
        rollout.state = change.state
        rollout.outcomes = [StepOutcome(o.step_id, o.ok, "") for o in change.outcomes]
        self.rollouts[change.plan_hash] = rollout
        if change.plan_hash == self.plan.approved_hash:
            self._grant_follows(rollout)
