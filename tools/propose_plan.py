"""`propose_plan`: the model puts a plan before a person; approved, it opens the session to change.

A plan `plan_deployment` computed is proposed by the hash it returned: the person is shown
Scout's own copy, kept in the session state, and the model copies nothing (a copy retyped by a
model can differ by one character, and then it is simply another, free-form plan, which no
rollout runs). A free-form plan is proposed as text (goal, steps, risks). The review itself is
the gate's (agent/safety/gate.py:PolicyGate.review_plan, given to this tool in its
constructor); the approved plan, and whether its steps were approved with it, are kept in the
session state, which records them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import BaseModel, Field, model_validator

from tools.base import Reason, Tool, ToolContext, ToolResult
from tools.deploy.rollout.state import SessionState
from tools.plans.plan import Plan, PlanStep

PlanReviewer = Callable[[Plan], Awaitable[tuple[bool, str, bool]]]


class ProposePlanInput(BaseModel):
    plan_hash: str | None = Field(
        default=None,
        description="The hash plan_deployment returned (`plan:…`): proposes that computed plan "
        "as Scout holds it. Give this, or a free-form plan (goal, steps, risks), not both.",
    )
    goal: str | None = Field(default=None, min_length=1)
    steps: list[PlanStep] | None = Field(default=None, min_length=1)
    risks: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_form(self) -> ProposePlanInput:
        written = self.goal is not None or self.steps is not None or bool(self.risks)
        if self.plan_hash is not None and written:
            raise ValueError("give plan_hash or a free-form plan (goal, steps, risks), not both")
        if self.plan_hash is None and (self.goal is None or self.steps is None):
            raise ValueError("give plan_hash, or a free-form plan with a goal and steps")
        return self

    def written_plan(self) -> Plan | None:
        if self.goal is None or self.steps is None:
            return None
        return Plan(goal=self.goal, steps=self.steps, risks=self.risks)


class ProposePlanTool(Tool[ProposePlanInput]):
    name = "propose_plan"
    description = (
        "Put a plan before the user for approval: a plan from plan_deployment by its plan_hash "
        "(do not copy it), or a free-form plan as goal, steps and risks. Until one is approved "
        "the session is read-only; proposing again replaces the plan."
    )
    Input = ProposePlanInput
    approves_plan = True

    def __init__(self, state: SessionState, review: PlanReviewer) -> None:
        """`state` is the session's: computed plans are found there, the approval kept there."""
        self.state = state
        self.review = review

    def summary(self, params: ProposePlanInput) -> str:
        plan = params.written_plan()
        if plan is None:
            return f"the computed plan {params.plan_hash}"
        return f"{plan.goal} ({plan.step_count()})"

    async def run(self, params: ProposePlanInput, ctx: ToolContext) -> ToolResult:
        plan = params.written_plan()
        if plan is None:
            plan = self.state.computed.get(params.plan_hash or "")
            if plan is None:
                known = ", ".join(self.state.computed) or "none yet"
                return ToolResult.error(
                    f"No plan computed in this session has the hash {params.plan_hash} "
                    f"(computed: {known}). Run plan_deployment, then propose the hash it returns.",
                    Reason(kind="unknown_plan_hash", fields={"plan_hash": params.plan_hash}),
                )
        self.state.plan.proposed = plan
        approved, message, with_steps = await self.review(plan)
        digest = plan.digest()
        if not approved:
            return ToolResult(
                text=(
                    f"The plan was not approved ({message or 'no reason given'}). The session "
                    "stays read-only. Revise the plan to address this, or ask the user."
                ),
                is_error=True,
                data={"plan_hash": digest, "approved": False},
            )
        self.state.approve_plan(plan, with_steps=with_steps)
        steps_too = (
            " The operator approved its steps as written: a call that runs exactly a step, in "
            "an order the steps allow, runs without asking again; anything else asks."
            if with_steps
            else " Each mutating action still passes the gate, and destructive ones are asked "
            "about one at a time."
        )
        return ToolResult(
            text=(
                f"Plan approved ({digest}). Work through it step by step."
                + steps_too
                + (f" Note from the approver: {message}" if message else "")
            ),
            data={
                "plan_hash": digest,
                "approved": True,
                "steps": len(plan.steps),
                "with_steps": with_steps,
            },
        )
