"""The briefing: the approved plan, the todo list and the world model, compact, in one place.

When older tool results are compacted (agent/loop/compaction.py), the facts they carried must
stay in front of the model. The session renders this briefing at that moment and puts it at the
head of the first message (agent/loop/history.py), replacing the previous one. It changes only
when the history is compacted anyway, so it never costs the prompt cache a turn of its own;
between compactions, whatever changed is in the uncompacted results that follow it.
"""

from __future__ import annotations

from agent.loop.history import BRIEFING_MARK
from tools.plan import PlanState
from tools.session_state import SessionState
from tools.todo import TodoList
from tools.world_store import WorldStore


def render_briefing(
    turn: int, *, todo: TodoList, state: SessionState, world: WorldStore | None
) -> str:
    lines = [
        f"{BRIEFING_MARK}, refreshed at model turn {turn}: older tool results below are "
        "compacted to stubs; what they found is summarised here.]"
    ]
    lines += _plan_lines(state.plan, state)
    if todo.items:
        lines += ["Todo:", todo.render()]
    if world is not None and (world.hosts or world.unreachable):
        lines += ["World model:", world.describe([*world.hosts, *world.unreachable])]
    return "\n".join(lines)


def _plan_lines(plan: PlanState, state: SessionState) -> list[str]:
    if plan.approved is None or plan.approved_hash is None:
        if plan.proposed is not None:
            return [f"Plan proposed, not approved: {plan.proposed.goal}"]
        return ["No plan approved yet: the session is read-only."]
    lines = [
        f"Approved plan {plan.approved_hash}: {plan.approved.goal} (the propose_plan call "
        "holds each step's commands)"
    ]
    for number, step in enumerate(plan.approved.steps, 1):
        where = f" on {', '.join(step.hosts)}" if step.hosts else ""
        lines.append(f"  {number}. {step.title}{where}")
    rollout = state.rollouts.get(plan.approved_hash)
    if rollout is not None:
        lines.append(f"  rollout: {rollout.summary()}")
    return lines
