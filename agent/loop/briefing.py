"""The briefing: the approved plan, the todo list and the world model, compact, in one place.

When older tool results are compacted (agent/loop/compaction.py), the facts they carried must
stay in front of the model. The session renders this briefing at that moment and puts it right
after the newest compacted result (agent/loop/history.py), removing the previous one: above it
the history is compacted, below it whole. It moves only when the history is compacted anyway,
so it costs the prompt cache no turn of its own; what changed since is in the whole results
that follow it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from agent.loop.compaction import CallRecord
from agent.loop.history import BRIEFING_MARK
from tools.deploy.rollout.state import SessionState
from tools.plans.approval import PlanState
from tools.todo import TodoList
from tools.world.store import WorldStore

SUMMARY_CHARS = 48  # a folded call's summary: enough to recognise it; recall_result has the rest


def render_briefing(
    turn: int,
    *,
    todo: TodoList,
    state: SessionState,
    world: WorldStore | None,
    folded: Sequence[CallRecord] = (),
) -> str:
    lines = [
        f"{BRIEFING_MARK} at model turn {turn}: results above are compacted; what they found "
        "is summarised here; results below are whole.]"
    ]
    lines += _plan_lines(state.plan, state)
    if todo.items:
        lines += ["Todo:", todo.render()]
    if world is not None and (world.hosts or world.unreachable or world.jobs):
        job_hosts = [job.host for job in world.jobs.values()]
        names = list(dict.fromkeys([*world.hosts, *world.unreachable, *job_hosts]))
        lines += [_world_heading(world), world.describe(names)]
    if folded:
        lines.append("Earlier calls, folded out of the history (recall_result reads one by id):")
        lines += _fold_log(folded)
    return "\n".join(lines)


def _fold_log(folded: Sequence[CallRecord]) -> list[str]:
    """One line per distinct folded call, oldest first; a repeat moves its line to the end.

    The same call on the same hosts with the same outcome (a status probed every few turns) is
    one line saying how often it ran and its newest id, the result closest to the present; the
    id is what `recall_result` needs once the call has left the history.
    """
    groups: dict[tuple[str, tuple[str, ...], str, str], list[CallRecord]] = {}
    for record in folded:
        what = " ".join(record.summary.split())
        key = (record.tool, tuple(record.hosts), what, record.outcome)
        groups[key] = [*groups.pop(key, []), record]  # re-inserted: ordered by newest run
    return [_fold_line(records) for records in groups.values()]


def _fold_line(runs: list[CallRecord]) -> str:
    newest = runs[-1]
    where = f" on {', '.join(newest.hosts)}" if newest.hosts else ""
    what = " ".join(newest.summary.split())
    what = what if len(what) <= SUMMARY_CHARS else what[: SUMMARY_CHARS - 1] + "…"
    times = f"{len(runs)}×, newest " if len(runs) > 1 else ""
    return f"- {newest.tool}{where} `{what}` → {newest.outcome} ({times}{newest.id})"


def _world_heading(world: WorldStore) -> str:
    """When each host was last probed: later changes show only in the results since."""
    now = datetime.now(UTC)
    ages = [
        f"{name} {_minutes((now - facts.collected_at).total_seconds())} ago"
        for name, facts in world.hosts.items()
    ]
    probed = f" (recon last probed {', '.join(ages)})" if ages else ""
    return f"World model{probed}:"


def _minutes(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes else "under a minute"


def _plan_lines(plan: PlanState, state: SessionState) -> list[str]:
    if plan.approved is None or plan.approved_hash is None:
        if plan.proposed is not None:
            return [f"Plan proposed, not approved: {_headline(plan.proposed.goal)}"]
        return ["No plan approved yet: the session is read-only."]
    lines = [
        f"Approved plan {plan.approved_hash}: {_headline(plan.approved.goal)} (its propose_plan "
        "call holds the whole goal and each step's commands)"
    ]
    for number, step in enumerate(plan.approved.steps, 1):
        where = f" on {', '.join(step.hosts)}" if step.hosts else ""
        lines.append(f"  {number}. {step.title}{where}")
    rollout = state.rollouts.get(plan.approved_hash)
    if rollout is not None:
        lines.append(f"  rollout: {rollout.summary()}")
    return lines


def _headline(goal: str) -> str:
    """A goal up to its first sentence's end; the reasons after it stay in the propose_plan call."""
    first, stop, rest = goal.partition(". ")
    return f"{first}. …" if stop and rest.strip() else goal
