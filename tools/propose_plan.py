"""`propose_plan`: the model puts a plan before a person; approved, it opens the session to change.

The review itself is the gate's (agent/safety/gate.py:PolicyGate.review_plan, given to this tool
in its constructor); the approved plan is kept in the session state, which records it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tools.base import Tool, ToolContext, ToolResult
from tools.plan import Plan

PlanReviewer = Callable[[Plan], Awaitable[tuple[bool, str]]]


class ProposePlanTool(Tool[Plan]):
    name = "propose_plan"
    description = (
        "Put a plan before the user for approval. Until one is approved the session is "
        "read-only; proposing again replaces the plan."
    )
    Input = Plan

    def __init__(self, review: PlanReviewer) -> None:
        self.review = review

    def summary(self, params: Plan) -> str:
        return f"{params.goal} ({params.step_count()})"

    async def run(self, params: Plan, ctx: ToolContext) -> ToolResult:
        ctx.state.plan.proposed = params
        approved, message = await self.review(params)
        digest = params.digest()
        if not approved:
            return ToolResult(
                text=(
                    f"The plan was not approved ({message or 'no reason given'}). The session "
                    "stays read-only. Revise the plan to address this, or ask the user."
                ),
                is_error=True,
                data={"plan_hash": digest, "approved": False},
            )
        ctx.state.approve_plan(params)
        return ToolResult(
            text=(
                f"Plan approved ({digest}). Work through it step by step; each mutating action "
                "still passes the gate, and destructive ones are asked about one at a time."
                + (f" Note from the approver: {message}" if message else "")
            ),
            data={"plan_hash": digest, "approved": True, "steps": len(params.steps)},
        )
