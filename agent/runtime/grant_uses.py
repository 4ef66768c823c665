"""A resumed plan's step approvals, used up again exactly as the transcript says they were.

Live, each call that runs on a step approved with the plan takes that step's approvals and,
when it ends, settles them: passed, or (failed, or never finished) the rest withdrawn
(tools/plans/approval.py). A resumed session rebuilds the grant from the approved plan, and the
rollout's records mark the steps it passed; a step run by another call (an ssh_exec of a
free-form plan's action) or a call a crash left unfinished is only in the transcript. Each
such call is taken and settled again here, in the order it ran, so a step already used does
not run unasked a second time, and a crash in the middle of one leaves the rest asking.
"""

from __future__ import annotations

from pydantic import ValidationError

from agent.loop.resumed import GrantedCall
from tools.plans.approval import StepApprovals
from tools.registry import ToolRegistry


def use_again(
    grant: StepApprovals | None, registry: ToolRegistry, calls: list[GrantedCall]
) -> str | None:
    """Use `grant` up as `calls` did; why it is withdrawn now, or None while it holds."""
    if grant is None:
        return None
    for call in calls:
        tool = registry.get(call.name)
        try:
            params = tool.Input.model_validate(call.input) if tool else None
        except ValidationError:
            params = None
        if tool is None or params is None:  # cannot tell which step it used: fail closed
            grant.withdraw(
                f"the recorded call {call.call_id} ({call.name}) cannot be read again",
                roll_back=False,
            )
            break
        step = grant.take(tool.commands(params))
        if step is None:
            continue  # a step the rollout's record already counts as used
        grant.settle(step, bool(call.ok))
        if call.ok is None:
            grant.withdraw(
                f"the call on step {step} ({call.call_id}) had not finished when the session "
                "stopped, so its effect is unknown",
                roll_back=False,
            )
            break
    return grant.withdrawn
