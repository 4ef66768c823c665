"""Run a plan Scout made (not the model) through the session's gate: proposed, approved once, run.

Day-two plans come from the deployment record, so no model is asked for them; but they change
hosts, so they pass exactly the path a model's calls pass (`Session.run_operator_calls`): the plan
is put before the approver as `propose_plan`, and each action then runs as `ssh_exec` — on the
plan's approval when the operator approved its steps with it, else asked one by one. The first
call that fails, or is refused, stops the plan. Afterwards the hosts are read again (`recon`), so
what the plan left is in the world model and the transcript.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from agent.loop.calls import ToolCall
from agent.runtime.builder import Runtime
from tools.base import ToolResult
from tools.plans.plan import Plan
from tools.propose_plan import ProposePlanTool


@dataclass
class PlanRun:
    """How a plan ended: `done`, `not approved` or `stopped`, with the results in order."""

    outcome: str
    detail: str = ""
    results: list[tuple[ToolCall, ToolResult]] = field(default_factory=list)


async def run_plan(runtime: Runtime, plan: Plan, *, verify_hosts: list[str]) -> PlanRun:
    """Propose `plan`, run its actions in order once approved, then recon `verify_hosts`."""
    run = PlanRun("done")
    proposal = plan.model_dump(include={"goal", "steps", "risks"})
    if not await _call(runtime, run, ProposePlanTool.name, proposal):
        run.outcome, run.detail = "not approved", _first_line(run.results[-1][1])
        return run
    for number, step in enumerate(plan.steps, 1):
        for action in step.actions:
            params = {"host": step.hosts[0], "command": action}
            if not await _call(runtime, run, "ssh_exec", params):
                run.outcome = "stopped"
                run.detail = f"step {number} ({step.title}): {_first_line(run.results[-1][1])}"
                return run
    await _call(runtime, run, "recon", {"hosts": verify_hosts})
    return run


async def _call(runtime: Runtime, run: PlanRun, tool: str, params: dict) -> bool:
    call = ToolCall(f"op-{uuid.uuid4().hex[:10]}", tool, params)
    [result] = await runtime.session.run_operator_calls([call])
    run.results.append((call, result))
    return not result.is_error


def _first_line(result: ToolResult) -> str:
    text = result.text.strip()
    return text.splitlines()[0][:300] if text else "no reason given"
