"""One-step plans for tests that need an approved (or proposed) plan before a mutating call."""

from __future__ import annotations

from tools.plans.plan import Plan, PlanStep


def one_step_plan(
    goal: str,
    *,
    title: str,
    host: str,
    actions: list[str],
    rollback: str,
    success_check: str,
    expected_downtime: str = "none",
) -> Plan:
    """A plan of a single step on one host: what the gate needs to let that step's calls ask."""
    step = PlanStep(
        title=title,
        hosts=[host],
        actions=actions,
        expected_downtime=expected_downtime,
        rollback=rollback,
        success_check=success_check,
    )
    return Plan(goal=goal, steps=[step])
