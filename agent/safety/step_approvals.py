"""Approve once, exactly: a plan's steps approved as written become single-use approvals.

When the operator approves a plan *with its steps*, each action of each step on each of its
hosts becomes one approval bound to (tool, host, the exact command, no env, no cwd): bytes, not
a normal form (`tools.plan.step_key`), so no here-doc, quote or indentation can differ. A call
that is exactly the next one in the plan uses its approvals up and runs without a question; anything
else (one flag, one host, an env, a step out of order) asks as usual. After a call that used a
step approval fails, the rest are withdrawn: from then on everything asks. Asking per step stays
the default; this only happens when the operator chose it. Steps stay sequential: while one
step call runs, the next one asks; and a step without hosts ends what can be approved this way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from tools.base import ToolResult
from tools.docker.commands import build_command
from tools.docker.params import DockerCtlInput
from tools.plan import Plan, step_key


@dataclass(frozen=True)
class StepCall:
    step: int
    action: int
    host: str
    command: str


def call_parts(tool: str, params: BaseModel, hosts: list[str]) -> list[tuple[str, str]] | None:
    """(host, command key) for each host a call runs a command on; None if it cannot be
    a plan action as written (another tool, or an env or cwd that no plan action carries)."""
    if tool == "ssh_exec":
        data: dict[str, Any] = params.model_dump()
        if data.get("env") or data.get("cwd") or not isinstance(data.get("command"), str):
            return None
        return [(host, step_key(data["command"])) for host in hosts]
    if tool == "docker_ctl" and isinstance(params, DockerCtlInput):
        return [(params.host, step_key(build_command(params)))]
    return None


class StepApprovals:
    """The approved plan's step calls, waiting to be used in order."""

    def __init__(self, plan: Plan) -> None:
        self.pending: list[StepCall] = []
        for number, step in enumerate(plan.steps, 1):
            if not step.hosts:
                break  # no host says where its actions run: from here on, each asks
            self.pending += [
                StepCall(number, index, host, step_key(action))
                for index, action in enumerate(step.actions)
                for host in step.hosts
            ]
        self.withdrawn: str | None = None
        self.running = 0

    def take(self, tool: str, params: BaseModel, hosts: list[str]) -> int | None:
        """Use up the approvals for this call if it is exactly the next plan action; its step."""
        if self.withdrawn or not self.pending or self.running:
            return None
        parts = call_parts(tool, params, hosts)
        if not parts:
            return None
        head = self.pending[0]
        group = [c for c in self.pending if (c.step, c.action) == (head.step, head.action)]
        wanted = [next((c for c in group if (c.host, c.command) == part), None) for part in parts]
        if any(c is None for c in wanted) or len(set(wanted)) != len(wanted):
            return None
        for used in wanted:
            self.pending.remove(used)  # type: ignore[arg-type]
        self.running += 1
        return head.step

    def settle(self, step: int, result: ToolResult | None) -> None:
        """A step call that failed (or never finished) withdraws every approval left."""
        self.running -= 1
        if result is None or result.is_error:
            self.withdrawn = f"step {step} failed"
            self.pending.clear()
