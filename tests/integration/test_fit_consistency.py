"""One fit rule, quoted by every message: over every bundled scenario and every community recipe,
the fit statements of a session (recon's memory findings, a GPU holder's "stopping it would
let…", the layout's reason, preflight's memory line) are collected as structured claims and held
against each other, at sizes that fit, fit only on more nodes, and do not fit at all."""

from __future__ import annotations

import pytest

from sim.scenario import list_scenarios
from tests.support.fit_claims import disagreements, statements, wrong_words
from tests.support.runner_table import RECIPES, TABLE, recipe_files
from tests.support.scenario_facts import scenario_facts
from tests.support.sparks import spark
from tools.checks import GB, compute_findings
from tools.deploy.choices import DeployChoices
from tools.deploy.plan.planner import (
    ClusterFacts,
    DeploymentPlan,
    Measured,
    PlanRefusal,
    plan_deployment,
)
from tools.deploy.recipe_book.load import read_recipe_file
from tools.world.facts import HostFacts, Image

pytestmark = pytest.mark.slow

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
SIZES_GB = (60, 119, 200, 400)


def _said(hosts: dict[str, HostFacts], choices: DeployChoices, measured: Measured):
    """Every fit statement of recon and of the plan for these choices, and the plan."""
    size = measured.model_size_bytes
    recon = compute_findings(hosts, model_size_bytes=size)
    plan = plan_deployment(ClusterFacts(hosts), choices, measured)
    report = plan.preflighted.report if plan.preflighted else None
    findings = [*recon, *(report.findings if report else [])]
    if isinstance(plan, PlanRefusal):
        findings += [*plan.findings, *plan.also_found]
    verdicts = [*(report.layout.verdicts if report and report.layout else ())]
    verdicts += [*(report.fit.verdicts if report and report.fit else ())]
    return findings, statements(findings, verdicts), plan


def _agree(findings, said, plan) -> None:
    assert said, "no fit statement was made"
    assert disagreements(said) == []
    assert wrong_words(findings) == []
    report = plan.preflighted.report if plan.preflighted else None
    if report and report.layout and not report.layout.fits:  # the plan says so as a blocker
        blockers = plan.unresolved if isinstance(plan, DeploymentPlan) else report.findings
        assert any(f.kind == "model_does_not_fit" for f in blockers), plan


@pytest.mark.parametrize("scenario", list_scenarios())
def test_every_fit_statement_of_a_scenario_agrees(scenario: str) -> None:
    hosts = scenario_facts(scenario)
    for size in SIZES_GB:
        choices = DeployChoices(model=MODEL, hosts=list(hosts))
        findings, said, plan = _said(hosts, choices, Measured(model_size_bytes=size * GB))
        if any(h.memory.budget_bytes for h in hosts.values()):
            _agree(findings, said, plan)


@pytest.mark.parametrize("name", recipe_files())
def test_every_fit_statement_of_a_community_recipe_agrees(name: str) -> None:
    import json

    recipe = read_recipe_file(RECIPES / name)
    runner = json.loads(TABLE.read_text(encoding="utf-8"))[name]
    names = [f"spark-{i}" for i in range(runner["nodes"])]
    image = Image(repository=runner["image"], tag="latest")
    hosts = {h: spark(h, 10 + i, images=[image]) for i, h in enumerate(names)}
    for per_node in (30, 95, 140):
        choices = DeployChoices(model=recipe.models[0], hosts=names)
        measured = Measured(model_size_bytes=len(names) * per_node * GB, given_recipe=recipe)
        findings, said, plan = _said(hosts, choices, measured)
        _agree(findings, said, plan)
