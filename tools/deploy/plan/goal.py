"""The Plan a person approves, made from a computed deployment: its goal in one line (what is
served, with which recipe and split, on which nodes, and why), its risks, and its proof."""

from __future__ import annotations

from collections.abc import Sequence

from tools.checks.layout import Layout
from tools.deploy.choices import DeployChoices
from tools.deploy.launch.parts import split_label
from tools.deploy.plan.fit import GB
from tools.deploy.plan.preflight import PreflightReport
from tools.deploy.proof.call import proof_step
from tools.deploy.steps import DeployStep
from tools.plans.plan import Plan


def to_plan(
    choices: DeployChoices,
    steps: list[DeployStep],
    report: PreflightReport,
    size: int | None,
    notes: Sequence[str] = (),
    proof_soak_s: float = 0.0,
) -> Plan:
    """The plan; its proof (`proof_step`) holds a soak of `proof_soak_s` after its sweep."""
    risks = [f.summary for f in report.findings if f.severity == "warning"]
    if report.fabric and any(p.ip is None for p in report.fabric.values()):
        unknown = [h for h, p in report.fabric.items() if p.ip is None]
        risks.append(
            f"fabric address of {', '.join(unknown)} unknown while its link is down: the commands "
            "read it when they run (`ip -4 -br addr show dev …` on the node, or from the head "
            "through ssh); re-run recon and plan_deployment after the link is up for literal "
            "addresses"
        )
    where = f"{size / GB:.0f} GB " if size else ""
    goal = (
        f"serve {choices.model} ({where}weights) with {choices.recipe}, "
        f"{split_label(choices)}, on {', '.join(choices.hosts)}; "
        f"endpoint {choices.head}:{choices.port}"
    )
    layout = report.layout
    if layout is not None and _layout_worth_saying(layout):
        goal += f" ({layout.reason})"
    for note in notes:
        goal += f". {note[0].upper()}{note[1:]}"
    if choices.pipeline_parallel and choices.pipeline_parallel > 1:
        risks.append(
            "pipeline parallelism needs the model's implementation in the engine to support "
            "it; if the engine refuses, ask for tensor_parallel over all GPUs instead"
        )
    proof = None
    if choices.port:
        proof = proof_step(choices.head, choices.port, choices.model, proof_soak_s)
    return Plan(goal=goal, steps=[s.plan_step() for s in steps], risks=risks, proof=proof)


def _layout_worth_saying(layout: Layout) -> bool:
    """The goal says why these nodes and this split unless it is the plain case: every host
    given, one GPU each, tensor parallelism across them."""
    plain = layout.gpus_per_node == 1 and layout.pipeline_parallel == 1
    return layout.chose_subset or not plain
