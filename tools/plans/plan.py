"""A plan as data: its steps and its hash (the session's proposal and approval: approval.py).

Until a human approves a plan the session is read-only (agent/safety/gate.py). An approved plan
is remembered by its hash, which the transcript records with the approval decision. Mutating
steps still pass the gate one by one; the plan says what each step serves.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

# Text in which a run of blanks can only separate words: one line, no quoting, no expansion.
_BLANKS_ONLY_SEPARATE = re.compile(r"[^'\"\\$`{}\n\r]*")
_BLANKS = re.compile(r"[ \t]+")


def step_key(command: str) -> str:
    """What an approved plan action and a call are compared by: the exact text.

    The one difference allowed is the width of blank runs on a line that has no quote, escape,
    expansion, brace or newline: there bash reads blanks only as word separators, so `docker  rm
    x` runs what `docker rm x` runs. Anywhere else (a here-doc, a multi-line quote, a Python body)
    one space can change what runs, so the bytes must match."""
    if _BLANKS_ONLY_SEPARATE.fullmatch(command):
        return _BLANKS.sub(" ", command).strip(" \t")
    return command


class PlanStep(BaseModel):
    title: str = Field(min_length=1)
    hosts: list[str] = Field(default_factory=list)
    actions: list[str] = Field(
        min_length=1, description="The exact commands or tool calls, in order."
    )
    expected_downtime: str = Field(
        description="What stops serving and for how long, or 'none'.", min_length=1
    )
    rollback: str = Field(min_length=1)
    success_check: str = Field(min_length=1)


class Plan(BaseModel):
    goal: str = Field(min_length=1)
    steps: list[PlanStep] = Field(min_length=1)
    risks: list[str] = Field(default_factory=list)
    proof: PlanStep | None = Field(
        default=None,
        description="The call that proves the plan worked once every step passed, as its tool "
        "declares it (plan_deployment writes endpoint_check's).",
    )
    on_failure: list[PlanStep] = Field(
        default_factory=list,
        description="The rollback the plan names: the steps (ending with their proof) that put "
        "back the known-good state when a step, a check or the proof fails. Approved with the "
        "plan's steps, they are granted with them (tools/plans/approval.py). Only Scout writes "
        "them (day two's upgrade); a free-form proposal has none.",
    )

    @model_serializer(mode="wrap")
    def _without_empty_rollback(self, dump: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A plan that names no rollback dumps (and hashes) as it did before plans could."""
        data = dump(self)
        if not data.get("on_failure"):
            data.pop("on_failure", None)
        return data

    def numbered(self, number: int) -> tuple[str, PlanStep] | None:
        """Step `number` as the grant counts them (steps, the proof, then the rollback's), with
        its label: `step 3`, `the proof`, `rollback step 2`."""
        count = len(self.steps)
        if 1 <= number <= count:
            return f"step {number}", self.steps[number - 1]
        if self.proof is not None and number == count + 1:
            return "the proof", self.proof
        back = number - count - (1 if self.proof is not None else 0)
        if 1 <= back <= len(self.on_failure):
            return f"rollback step {back}", self.on_failure[back - 1]
        return None

    def digest(self) -> str:
        body = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return "plan:" + hashlib.sha256(body.encode()).hexdigest()[:16]

    def step_count(self) -> str:
        """`1 step`, `7 steps`."""
        return f"{len(self.steps)} step" + ("" if len(self.steps) == 1 else "s")

    def render(self) -> str:
        lines = [f"Plan: {self.goal}"]
        for number, step in enumerate(self.steps, 1):
            where = f" on {', '.join(step.hosts)}" if step.hosts else ""
            lines.append(f"{number}. {step.title}{where}")
            lines.extend(f"     $ {action}" for action in step.actions)
            lines.append(f"     downtime: {step.expected_downtime}")
            lines.append(f"     rollback: {step.rollback}")
            lines.append(f"     check: {step.success_check}")
        if self.proof is not None:
            lines.append(f"Then, the proof: {self.proof.title} on {', '.join(self.proof.hosts)}")
            lines.extend(f"     $ {action}" for action in self.proof.actions)
        if self.on_failure:
            lines.append(
                "If a step, a check or the proof fails, these run at once to roll back "
                "(approved with the steps, nothing more is asked):"
            )
            for number, step in enumerate(self.on_failure, 1):
                where = f" on {', '.join(step.hosts)}" if step.hosts else ""
                lines.append(f"  R{number}. {step.title}{where}")
                lines.extend(f"     $ {action}" for action in step.actions)
        if self.risks:
            lines.append("Risks: " + "; ".join(self.risks))
        return "\n".join(lines)
