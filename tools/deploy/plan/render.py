"""What plan_deployment answers: the computed plan (or why there is none) as the text the model
reads, and the same as data for the world model and the faces.

The text leads with what no step can fix, then the plan, preflight's findings and the engine's
settings, and ends by saying how to propose the plan by its hash.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tools.checks import Finding
from tools.deploy.plan.planner import DeploymentPlan, PlanRefusal, Preflighted


@dataclass(frozen=True)
class Answer:
    """One answer of plan_deployment; `summary` says what was planned (recipe, model, nodes)."""

    text: str
    is_error: bool
    data: dict[str, Any] = field(default_factory=dict)
    summary: str | None = None


def render_refusal(refusal: PlanRefusal) -> Answer:
    """Why no plan was made, with preflight's findings as data when it ran."""
    if refusal.kind == "recipe":
        return Answer(f"Cannot plan with this recipe: {refusal.problems[0]}", True)
    data = _preflight_data(refusal.preflighted) if refusal.preflighted else {}
    if refusal.kind == "recipe-params":
        text = "Cannot plan with this recipe:\n" + "\n".join(f"- {p}" for p in refusal.problems)
    elif refusal.kind == "weights":
        data["preflight"] += [f.model_dump() for f in refusal.also_found]
        text = "Cannot plan this deployment yet (nothing was downloaded):\n" + _blocker_lines(
            refusal.findings
        )
    else:
        text = "Cannot plan this deployment yet:\n" + _blocker_lines(refusal.findings)
    return Answer(text, True, data)


def render_plan(deployment: DeploymentPlan, blockers: Sequence[Finding] = ()) -> Answer:
    """The plan, with what no step can fix first; `blockers`: found after planning (the head's
    ssh into a worker refused)."""
    report = deployment.preflighted.report
    choices, plan = deployment.choices, deployment.plan
    unresolved = [*deployment.unresolved, *blockers]
    data = _preflight_data(deployment.preflighted)
    data.update(
        plan=plan.model_dump(mode="json"),
        plan_hash=plan.digest(),
        steps=[s.model_dump() for s in deployment.steps],
        fabric={h: p.__dict__ for h, p in (report.fabric or {}).items()},
        fit=report.fit.lines if report.fit else None,
        provision=list(deployment.provision_notes),
        recipe={
            "name": deployment.setup.recipe.name if deployment.setup.recipe else None,
            "notes": list(deployment.recipe_notes),
        },
    )
    text = plan.render() + "\n\nPreflight:\n" + report.render()
    if report.settings:
        text += "\n\nEngine settings:\n" + "\n".join(f"- {s}" for s in report.settings)
    if unresolved:
        text = (
            "The plan cannot succeed until these are done (not fixable from here):\n"
            + _blocker_lines(unresolved)
            + "\n\n"
            + text
        )
    text += f'\n\nPropose it as computed: propose_plan {{"plan_hash": "{plan.digest()}"}}.'
    summary = f"{choices.recipe} {choices.model} on {', '.join(choices.hosts)}"
    return Answer(text, bool(unresolved), data, summary)


def _preflight_data(preflighted: Preflighted) -> dict[str, Any]:
    report = preflighted.report
    data: dict[str, Any] = {
        "preflight": [f.model_dump() for f in report.findings],
        "model_size_bytes": preflighted.size,
    }
    if preflighted.hub_revision:
        data["hub_revision"] = preflighted.hub_revision
    if report.layout is not None:
        data["layout"] = {
            "hosts": list(report.layout.hosts),
            "tensor_parallel": report.layout.tensor_parallel,
            "pipeline_parallel": report.layout.pipeline_parallel,
            "reason": report.layout.reason,
        }
    return data


def _blocker_lines(findings: Sequence[Finding]) -> str:
    return "\n".join(f"- {f.summary}" for f in findings)
