"""The deployment planner: from facts and choices to typed phases of steps, or a refusal.

A pure function. Everything it reads was gathered beforehand (tools/deploy/plan/facts.py: hosts
re-probed, the model's size, the caches measured, the recipe file and config.json read), so the
same facts always give the same plan and a test can call it on facts alone. The steps come in
phases, in the order a rollout needs them: fixes for what preflight found (free memory, a link
up), supplies (image, weights, Ray), the fabric test, the host guards cleared right before the
engine, and the launch. The plan's text is rendered elsewhere (tools/deploy/plan/render.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from tools.checks import Finding
from tools.checks.budget import DEFAULT_UTILIZATION, budgets_for
from tools.deploy.choices import DeployChoices
from tools.deploy.fabric.nccl_test import fabric_test_risk, fabric_test_step
from tools.deploy.fabric.peer_ssh import addresses_used
from tools.deploy.fabric.ring_nccl import ring_nccl
from tools.deploy.launch.recipes import build_recipe
from tools.deploy.launch.topology import (
    Topology,
    TopologyRefusal,
    apply_topology,
    asked_settings,
    asked_topology,
)
from tools.deploy.plan.fixes import fix_steps
from tools.deploy.plan.goal import to_plan
from tools.deploy.plan.host_guards import guard_steps
from tools.deploy.plan.preflight import PreflightInput, PreflightReport, run_preflight
from tools.deploy.plan.provision import ProvisionInput, image_name, provision
from tools.deploy.plan.quant_offer import offers, with_offers
from tools.deploy.plan.recipe_plan import RecipeRefusal, RecipeSetup, finish, pick, trade_off
from tools.deploy.plan.weights import FETCH_KINDS
from tools.deploy.proof.node_identity import disagreements, plan_identities
from tools.deploy.recipe_book.choose import RecipeMismatch
from tools.deploy.recipe_book.load import RecipeError, bundled_recipes
from tools.deploy.recipe_book.model_parsers import ModelParsers
from tools.deploy.recipe_book.model_shape import KvShape, shape_from_recipe
from tools.deploy.recipe_book.schema import Recipe
from tools.deploy.rollout.order import order_steps
from tools.deploy.steps import DeployStep
from tools.plans.plan import Plan
from tools.world.facts import HostFacts


@dataclass(frozen=True)
class ClusterFacts:
    """The hosts as recon saw them, those that did not answer, and what the inventory says of
    each (its address, the jump host it is reached through); `links_tried`: hosts whose RoCE
    link stayed down after `ip link set … up`."""

    hosts: Mapping[str, HostFacts]
    unreachable: Mapping[str, str] = field(default_factory=dict)
    addresses: Mapping[str, str] = field(default_factory=dict)
    jumps: Mapping[str, str] = field(default_factory=dict)
    links_tried: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Measured:
    """What was looked up for this model: its size and the Hub's commit (None: unknown), its
    bytes in each host's cache, the operator's recipe file, the KV shape and the engine's
    parsers from the model's config files, whether the Hub gates it, and whether a token is at
    hand for that."""

    model_size_bytes: int | None = None
    hub_revision: str | None = None
    cached_bytes: Mapping[str, int | None] = field(default_factory=dict)
    given_recipe: Recipe | None = None
    config_shape: KvShape | None = None
    parsers: tuple[ModelParsers, str] | None = None  # from the model's config files, and where
    gated: bool = False
    token_present: bool = False
    visible_recipes: tuple[Recipe, ...] = ()  # beside the operator's recipe file


PhaseName = Literal["fixes", "supplies", "fabric-test", "host-guards", "launch"]


@dataclass(frozen=True)
class Phase:
    """Steps with one purpose; a later phase's steps need the earlier ones'."""

    name: PhaseName
    steps: tuple[DeployStep, ...]


@dataclass(frozen=True)
class Preflighted:
    """What preflight found, with the model size and Hub commit it checked against."""

    report: PreflightReport
    size: int | None
    hub_revision: str | None


RefusalKind = Literal["recipe", "preflight", "weights", "recipe-params"]


@dataclass(frozen=True)
class PlanRefusal:
    """No plan: `kind` says at which stage, `findings` the blockers that stop it, `problems`
    what the recipe could not do. Preflight's findings come with it once it ran."""

    kind: RefusalKind
    findings: tuple[Finding, ...] = ()
    problems: tuple[str, ...] = ()
    preflighted: Preflighted | None = None
    also_found: tuple[Finding, ...] = ()  # provisioning's own blockers, reported with preflight's


@dataclass(frozen=True)
class DeploymentPlan:
    """A computed plan: its phases, the steps in rollout order, the Plan a person approves,
    what no step can fix (`unresolved`), and per worker the addresses the head's commands name
    (`peer_targets`: the head's ssh into them is checked before the plan leans on it)."""

    preflighted: Preflighted
    choices: DeployChoices
    setup: RecipeSetup
    phases: tuple[Phase, ...]
    steps: tuple[DeployStep, ...]
    plan: Plan
    unresolved: tuple[Finding, ...]
    recipe_notes: tuple[str, ...]
    provision_notes: tuple[str, ...]
    peer_targets: Mapping[str, list[str]]

    def phase(self, name: PhaseName) -> tuple[DeployStep, ...]:
        return next((p.steps for p in self.phases if p.name == name), ())


def plan_deployment(
    facts: ClusterFacts, choices: DeployChoices, measured: Measured, proof_soak_s: float = 0.0
) -> DeploymentPlan | PlanRefusal:
    """The plan for `choices` on `facts`, or why there is none; its proof soaks `proof_soak_s`."""
    asked = list(choices.hosts)
    size = measured.model_size_bytes
    if size is None:
        size = max((v for v in _cached_sizes(facts, choices, measured) if v), default=None)
    try:
        setup = pick(choices, facts.hosts, measured.given_recipe)
        given = setup.recipe if measured.given_recipe is not None else None
        topology = asked_topology(given, choices, facts.hosts)
        settings = asked_settings(given, choices)
    except (RecipeError, RecipeMismatch, RecipeRefusal, TopologyRefusal) as exc:
        return PlanRefusal("recipe", problems=(str(exc),))
    choices = choices.model_copy(update={"image": setup.image})
    own = choices
    if topology is not None:
        choices = apply_topology(choices, topology)
    choices = choices.model_copy(update=settings)
    setup.shape = measured.config_shape
    if setup.shape is None and setup.recipe is not None and setup.recipe.model_shape:
        setup.shape = shape_from_recipe(setup.recipe.model_shape, setup.recipe.name)
    report = run_preflight(_preflight_input(facts, measured, size, setup), choices)
    if topology is None and given is None and report.fabric is not None:
        topology, report = _bundled_layout(setup, own, facts, report, measured, size)
    if size:
        report.findings = _offered(report, size, [setup.recipe, *measured.visible_recipes], facts)
    preflighted = Preflighted(report, size, measured.hub_revision)
    choices = report.choices
    if report.fabric is None:
        return PlanRefusal("preflight", tuple(report.blockers), preflighted=preflighted)
    fixes, unresolved = fix_steps(report, choices)
    supplies = _provision_input(facts, report, measured, setup)
    prov = provision(supplies, choices)
    unresolved += prov.blockers
    stoppers = tuple(f for f in unresolved if f.check == "weights")
    if stoppers:
        return PlanRefusal(
            "weights", stoppers, preflighted=preflighted, also_found=tuple(prov.blockers)
        )
    if prov.recipe != choices.recipe:
        choices = choices.model_copy(update={"recipe": prov.recipe})
    choices, recipe_notes, unfilled = finish(setup, choices, measured.parsers)
    if unfilled:
        return PlanRefusal("recipe-params", problems=tuple(unfilled), preflighted=preflighted)
    sized = ("--max-model-len", "--gpu-memory-utilization") if given else ("--max-model-len",)
    recipe_notes += [s for s in report.settings if s.startswith(sized)]
    if topology is not None:
        recipe_notes.append(_topology_line(topology, facts, measured, size, setup, own))
    if settings:
        said = ", ".join(f"{k} {v:g}" for k, v in settings.items())
        recipe_notes.append(f"{said}: the recipe's defaults, as its runner passes them")
    if line := trade_off(setup, choices, facts.hosts):
        recipe_notes.append(line)
    recipe = build_recipe(choices, report.fabric, install_ray=prov.install_ray)
    fabric_links = [f.id for f in fixes if f.kind in ("link-up", "netplan")]
    copies = [s for s in prov.steps if s.kind in ("copy", "image-copy")]
    for copy in copies:  # the weights and the image cross the fabric once its link is up
        copy.needs = [*copy.needs, *fabric_links]
    # the test measures the fabric once it is up and the copies no longer load it
    programs = {h: facts.hosts[h].fabric_tests for h in choices.hosts if h in facts.hosts}
    test = fabric_test_step(
        choices,
        report.fabric,
        [*fabric_links, *(c.id for c in copies)],
        supplies.addresses,
        programs=programs,
    )
    ring = ring_nccl(
        facts.hosts, asked, choices.hosts, report.fabric, image_name(choices.image or "")
    )
    unresolved += ring.blockers
    guards = [*ring.steps, *guard_steps(report.findings, choices.hosts)]
    phases = _phases(fixes, prov.steps, [test] if test else [], guards, recipe.steps)
    ordered = order_steps([s for p in phases for s in p.steps])
    notes = [*recipe_notes, *prov.notes, *ring.notes]
    plan = to_plan(choices, ordered, report, size, notes, proof_soak_s)
    if untested := fabric_test_risk(choices, report.fabric, programs):
        plan.risks.append(untested)
    # the image (and the engine in it) is the image copy's (provision.py), the driver preflight's
    # (checks/versions.py); what else recon knows differs (a probed NCCL build) is said here
    identities = plan_identities(facts.hosts, choices.hosts, image_name(choices.image or ""))
    skip = ("image_id", "engine_version", "driver")
    plan.risks += [f.summary for f in disagreements(identities, skip=skip)]
    return DeploymentPlan(
        preflighted=preflighted,
        choices=choices,
        setup=setup,
        phases=phases,
        steps=tuple(ordered),
        plan=plan,
        unresolved=tuple(unresolved),
        recipe_notes=tuple(recipe_notes),
        provision_notes=tuple(prov.notes),
        peer_targets=_peer_targets(ordered, choices, report, supplies),
    )


def _bundled_layout(
    setup: RecipeSetup,
    own: DeployChoices,
    facts: ClusterFacts,
    report: PreflightReport,
    measured: Measured,
    size: int | None,
) -> tuple[Topology | None, PreflightReport]:
    """The bundled recipe's layout where Scout's chooser picked another and the recipe's also
    passes preflight (MiniMax-M2.5 on four Sparks: TP=4, as NVIDIA and the community run it,
    not the fewest nodes that hold it); else the chooser's."""
    try:
        topology = asked_topology(setup.recipe, own, facts.hosts)
    except TopologyRefusal:
        return None, report
    if topology is None or report.layout is None or topology.matches(report.layout):
        return None, report
    theirs = run_preflight(
        _preflight_input(facts, measured, size, setup), apply_topology(own, topology)
    )
    if theirs.fabric is None or len(theirs.blockers) > len(report.blockers):
        return None, report
    return topology, theirs


def _topology_line(
    topology: Topology,
    facts: ClusterFacts,
    measured: Measured,
    size: int | None,
    setup: RecipeSetup,
    own: DeployChoices,
) -> str:
    """The recipe's layout, and Scout's own chooser's where it differs."""
    line = f"layout: {topology.label} ({topology.why}; the recipe wins over Scout's chooser: "
    line += "set tensor_parallel, pipeline_parallel or nodes to choose otherwise)"
    mine = run_preflight(_preflight_input(facts, measured, size, setup), own).layout
    if mine is None:
        return line
    label = f"{mine.label} on {len(mine.hosts)} node{'s' if len(mine.hosts) > 1 else ''}"
    return line + (
        "; Scout's chooser agrees" if topology.matches(mine) else f"; Scout's chooser: {label}"
    )


def _offered(
    report: PreflightReport, size: int, recipes: list[Recipe | None], facts: ClusterFacts
) -> list[Finding]:
    """Preflight's findings, its memory blocker naming the quantisations that would fit."""
    seen = [*bundled_recipes(), *(r for r in recipes if r is not None)]
    budgets = budgets_for(facts.hosts, report.choices.hosts)
    u = report.choices.gpu_memory_utilization or DEFAULT_UTILIZATION
    found = offers(report.choices.model, size, seen, budgets, u)
    return [
        with_offers(f, found, report.choices.model) if f.kind == "model_does_not_fit" else f
        for f in report.findings
    ]


def _phases(
    fixes: list[DeployStep],
    supplies: list[DeployStep],
    tests: list[DeployStep],
    guards: list[DeployStep],
    launch: list[DeployStep],
) -> tuple[Phase, ...]:
    """The phases, each needing what came before: the guards wait for the fixes, supplies and
    fabric test (a download or a copy fills the page cache they clear, so they come last),
    every launch step for all of those."""
    before = [s.id for s in [*fixes, *supplies, *tests]]
    for guard in guards:
        guard.needs = list(before)
    for step in launch:
        step.needs = [*step.needs, *before, *(g.id for g in guards)]
    return (
        Phase("fixes", tuple(fixes)),
        Phase("supplies", tuple(supplies)),
        Phase("fabric-test", tuple(tests)),
        Phase("host-guards", tuple(guards)),
        Phase("launch", tuple(launch)),
    )


def _cached_sizes(
    facts: ClusterFacts, choices: DeployChoices, measured: Measured
) -> list[int | None]:
    """The model's bytes in each host's cache: measured, else from recon's cache listing."""
    listings = {h: f.hf_cache.models or {} for h, f in facts.hosts.items()}
    return [
        measured.cached_bytes[h]
        if h in measured.cached_bytes
        else listings.get(h, {}).get(choices.model)
        for h in choices.hosts
    ]


def _preflight_input(
    facts: ClusterFacts, measured: Measured, size: int | None, setup: RecipeSetup
) -> PreflightInput:
    return PreflightInput(
        hosts=facts.hosts,
        unreachable=facts.unreachable,
        model_size_bytes=size,
        cached_bytes=measured.cached_bytes,
        links_tried=facts.links_tried,
        hub_revision=measured.hub_revision,
        kv_shape=setup.shape,
        context_target=setup.target,
        kv_element_bytes=setup.element_bytes,
    )


def _provision_input(
    facts: ClusterFacts, report: PreflightReport, measured: Measured, setup: RecipeSetup
) -> ProvisionInput:
    """Which nodes need the weights (preflight said so), which reach the internet only
    through a jump host (the inventory says so), and whether a token is at hand."""
    hosts = report.choices.hosts
    need = tuple(
        h
        for f in report.findings
        if f.check == "weights" and f.kind in FETCH_KINDS
        for h in f.hosts
    )
    return ProvisionInput(
        hosts={h: facts.hosts[h] for h in hosts},
        fabric=report.fabric or {},
        need_weights=need,
        offline={h: facts.jumps[h] for h in hosts if facts.jumps.get(h)},
        addresses={h: facts.addresses[h] for h in hosts if h in facts.addresses},
        gated=measured.gated,
        token_present=measured.token_present,
        build=setup.recipe.build if setup.recipe and _runs_recipe_image(setup) else None,
    )


def _runs_recipe_image(setup: RecipeSetup) -> bool:
    """The plan runs the recipe's own image (not one the operator named instead)."""
    return (
        setup.recipe is not None
        and setup.recipe.image is not None
        and (setup.image == setup.recipe.image.ref)
    )


def _peer_targets(
    steps: list[DeployStep],
    choices: DeployChoices,
    report: PreflightReport,
    supplies: ProvisionInput,
) -> dict[str, list[str]]:
    """Per worker, the addresses (fabric or management) the head's commands name."""
    if not choices.workers:
        return {}
    fabric = report.fabric or {}
    candidates = {
        w: [fabric[w].ip if w in fabric else None, supplies.addresses.get(w, w)]
        for w in choices.workers
    }
    return addresses_used(steps, choices.head, candidates)
