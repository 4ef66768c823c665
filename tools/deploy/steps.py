"""A deployment step as data: where it runs, its commands, how success shows, how to undo it."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from tools.plan import PlanStep


class StepCheck(BaseModel):
    """A read-only command whose output proves a step worked."""

    host: str
    command: str
    expect: str | None = Field(default=None, description="Regex the output must (not) match.")
    absent: bool = Field(default=False, description="Pass when `expect` is NOT found.")
    description: str

    def passes(self, exit_status: int | None, output: str) -> bool:
        if exit_status != 0:
            return False
        if self.expect is None:
            return True
        return (re.search(self.expect, output, re.M) is None) == self.absent

    def render(self) -> str:
        return f"on {self.host}: `{self.command}` → {self.description}"


class DeployStep(BaseModel):
    """One gated step on one host; `needs` names steps that must have succeeded first."""

    id: str
    title: str
    host: str
    actions: list[str] = Field(min_length=1)
    check: StepCheck
    rollback: str
    expected_downtime: str = "none"
    needs: list[str] = Field(default_factory=list)
    by_hand: bool = Field(default=False, description="A person must do it; Scout cannot.")

    def plan_step(self) -> PlanStep:
        """The step as a person approves it in a plan: what, where, how, undo, proof."""
        return PlanStep(
            title=self.title,
            hosts=[self.host] if self.host else [],
            actions=self.actions,
            expected_downtime=self.expected_downtime,
            rollback=self.rollback,
            success_check=self.check.render(),
        )
