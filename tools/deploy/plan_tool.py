"""`plan_deployment`: compute a deployment plan from the world model; it changes nothing.

Preflight on fresh facts (stale hosts are probed again), the fixes the findings require, then the
recipe's steps, returned as a `Plan` ready for propose_plan. The steps are kept in the session
state under the plan's hash, so rollout_step can run exactly the plan a person approved.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence

from pydantic import Field

from tools.base import Tool, ToolContext, ToolResult
from tools.checks import Finding
from tools.checks.layout import Layout
from tools.deploy import recipe_plan
from tools.deploy.choices import DeployChoices
from tools.deploy.fabric_test import fabric_test_risk, fabric_test_step
from tools.deploy.fit import (
    DEFAULT_HF_CACHE,
    GB,
    ModelSizeError,
    du_command,
    size_from_du,
    size_from_hub,
)
from tools.deploy.fixes import fix_steps
from tools.deploy.host_guards import guard_steps
from tools.deploy.peer_ssh import addresses_used, peer_ssh_findings
from tools.deploy.preflight import PreflightInput, PreflightReport, run_preflight
from tools.deploy.provision import ProvisionInput, image_name, provision
from tools.deploy.recipe_book.choose import RecipeMismatch
from tools.deploy.recipe_book.load import RecipeError
from tools.deploy.recipe_parts import split_label
from tools.deploy.recipe_plan import RecipeRefusal
from tools.deploy.recipes import build_recipe
from tools.deploy.ring_nccl import ring_nccl
from tools.deploy.rollout import order_steps
from tools.deploy.state import SessionState
from tools.deploy.steps import DeployStep
from tools.deploy.weights import FETCH_KINDS
from tools.endpoint_check import proof_step
from tools.plans.plan import Plan
from tools.recon.probe import probe_hosts
from tools.ssh.errors import SSHError
from tools.web.errors import WebFetchError
from tools.world.store import WorldStore


class PlanDeploymentInput(DeployChoices):
    model_size_gb: float | None = Field(
        default=None, gt=0, description="Weights in GB if known (else looked up)."
    )
    links_tried: list[str] = Field(
        default_factory=list,
        description="Hosts whose RoCE link stayed down after `ip link set … up`.",
    )
    gated: bool = Field(
        default=False,
        description="The model's Hub repository is gated (its page or API says so): the "
        "download needs HF_TOKEN in Scout's environment.",
    )


class PlanDeploymentTool(Tool[PlanDeploymentInput]):
    name = "plan_deployment"
    description = (
        "Compute a deployment plan, read-only: preflight on the world model (stale hosts "
        "re-probed), the fit check, the fixes the findings need (free memory, a RoCE link up, "
        "a missing image) before the recipe's commands. Returns a Plan for propose_plan."
    )
    Input = PlanDeploymentInput

    def __init__(
        self,
        state: SessionState,
        max_age_s: float = 600.0,
        operator_env: Mapping[str, str] | None = None,
    ) -> None:
        """`state`: the session's, which keeps each computed deployment by its plan's hash.
        `operator_env`: where HF_TOKEN is looked for (default: Scout's own environment);
        only its presence is read here, the value goes to the download job at run time."""
        self.state = state
        self.max_age_s = max_age_s
        self.operator_env = os.environ if operator_env is None else operator_env

    def hosts(self, params: PlanDeploymentInput) -> list[str]:
        return list(params.hosts)

    def summary(self, params: PlanDeploymentInput) -> str:
        """What was asked; the result's `meta["summary"]` says what was planned (the recipe
        and hosts the plan chose)."""
        return f"{params.recipe} {params.model} on {', '.join(params.hosts)}"

    async def run(self, params: PlanDeploymentInput, ctx: ToolContext) -> ToolResult:
        if ctx.world is None:
            return ToolResult.error(
                "plan_deployment needs the session's world model, and there is none."
            )
        world = ctx.world
        await self._refresh(world, params.hosts, ctx)
        size, hub_revision = await self._model_size(world, params, ctx)
        cached = await _measured_cache_sizes(params, ctx)
        if size is None:
            size = max((v for v in _cached_sizes(world, params, cached) if v), default=None)
        choices = DeployChoices.model_validate(
            params.model_dump(exclude={"model_size_gb", "links_tried", "gated"})
        )
        try:
            given = await recipe_plan.load_given(choices, ctx)
            setup = recipe_plan.pick(choices, world.hosts, given)
        except (RecipeError, RecipeMismatch, RecipeRefusal) as exc:
            return ToolResult.error(f"Cannot plan with this recipe: {exc}")
        choices = choices.model_copy(update={"image": setup.image})
        await recipe_plan.read_shape(setup, choices, ctx)
        report = run_preflight(
            PreflightInput(
                hosts=world.hosts,
                unreachable=world.unreachable,
                model_size_bytes=size,
                cached_bytes=cached,
                links_tried=frozenset(params.links_tried),
                hub_revision=hub_revision,
                kv_shape=setup.shape,
                context_target=setup.target,
                kv_element_bytes=setup.element_bytes,
            ),
            choices,
        )
        data = {"preflight": [f.model_dump() for f in report.findings], "model_size_bytes": size}
        if hub_revision:
            data["hub_revision"] = hub_revision
        if report.layout is not None:
            data["layout"] = {
                "hosts": list(report.layout.hosts),
                "tensor_parallel": report.layout.tensor_parallel,
                "pipeline_parallel": report.layout.pipeline_parallel,
                "reason": report.layout.reason,
            }
        choices = report.choices
        if report.fabric is None:
            return ToolResult(
                text="Cannot plan this deployment yet:\n" + _blocker_lines(report.blockers),
                is_error=True,
                data=data,
            )
        fixes, unresolved = fix_steps(report, choices)
        supplies = self._provision_input(world, report, params, ctx)
        prov = provision(supplies, choices)
        unresolved += prov.blockers
        stoppers = [f for f in unresolved if f.check == "weights"]
        if stoppers:
            data["preflight"] += [f.model_dump() for f in prov.blockers]
            return ToolResult(
                text="Cannot plan this deployment yet (nothing was downloaded):\n"
                + _blocker_lines(stoppers),
                is_error=True,
                data=data,
            )
        if prov.recipe != choices.recipe:
            choices = choices.model_copy(update={"recipe": prov.recipe})
        choices, recipe_notes, unfilled = recipe_plan.finish(setup, choices)
        if unfilled:
            return ToolResult(
                text="Cannot plan with this recipe:\n" + "\n".join(f"- {p}" for p in unfilled),
                is_error=True,
                data=data,
            )
        recipe_notes += [s for s in report.settings if s.startswith("--max-model-len")]
        if line := recipe_plan.trade_off(setup, choices, world.hosts):
            recipe_notes.append(line)
        recipe = build_recipe(choices, report.fabric, install_ray=prov.install_ray)
        before = [f.id for f in fixes]
        fabric_links = [f.id for f in fixes if f.kind in ("link-up", "netplan")]
        copies = [s.id for s in prov.steps if s.kind in ("copy", "image-copy")]
        for step in prov.steps:
            if step.id in copies:
                step.needs = [*step.needs, *fabric_links]
        # the test measures the fabric once it is up and the copies no longer load it
        programs = {h: world.hosts[h].fabric_tests for h in choices.hosts if h in world.hosts}
        test = fabric_test_step(
            choices, report.fabric, [*fabric_links, *copies], supplies.addresses, programs=programs
        )
        untested = fabric_test_risk(choices, report.fabric, programs)
        extra = [test] if test else []
        ring = ring_nccl(
            world.hosts, params.hosts, choices.hosts, report.fabric, image_name(choices.image or "")
        )
        unresolved += ring.blockers
        # what the hosts do to an engine is cleared last: a download or a copy fills the cache
        guards = [*ring.steps, *guard_steps(report.findings, choices.hosts)]
        for guard in guards:
            guard.needs = [*before, *(s.id for s in prov.steps + extra)]
        for step in recipe.steps:
            step.needs = [*step.needs, *before, *(s.id for s in prov.steps + extra + guards)]
        ordered = order_steps([*fixes, *prov.steps, *extra, *guards, *recipe.steps])
        unresolved += await _peer_ssh(ordered, choices, report, supplies, ctx)
        plan = to_plan(choices, ordered, report, size, [*recipe_notes, *prov.notes, *ring.notes])
        if untested:
            plan.risks.append(untested)
        self.state.add_deployment(plan, ordered)
        data.update(
            plan=plan.model_dump(mode="json"),
            plan_hash=plan.digest(),
            steps=[s.model_dump() for s in ordered],
            fabric={h: p.__dict__ for h, p in report.fabric.items()},
            fit=report.fit.lines if report.fit else None,
            provision=prov.notes,
            recipe={"name": setup.recipe.name if setup.recipe else None, "notes": recipe_notes},
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
        planned = f"{choices.recipe} {choices.model} on {', '.join(choices.hosts)}"
        return ToolResult(
            text=text, is_error=bool(unresolved), data=data, meta={"summary": planned}
        )

    def _provision_input(
        self,
        world: WorldStore,
        report: PreflightReport,
        params: PlanDeploymentInput,
        ctx: ToolContext,
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
        offline: dict[str, str] = {}
        addresses: dict[str, str] = {}
        if ctx.ssh is not None:
            known = set(ctx.ssh.inventory.names())
            for host in (h for h in hosts if h in known):
                spec = ctx.ssh.inventory.get(host)
                addresses[host] = spec.address
                if spec.jump:
                    offline[host] = spec.jump
        return ProvisionInput(
            hosts={h: world.hosts[h] for h in hosts},
            fabric=report.fabric or {},
            need_weights=need,
            offline=offline,
            addresses=addresses,
            gated=params.gated,
            token_present=bool(self.operator_env.get("HF_TOKEN")),
        )

    async def _refresh(self, world: WorldStore, hosts: list[str], ctx: ToolContext) -> None:
        stale = world.stale_hosts(hosts, self.max_age_s)
        if not stale or ctx.ssh is None:
            return
        known = set(ctx.ssh.inventory.names())
        stale = [h for h in stale if h in known]
        if stale:
            ctx.report(f"re-probing {', '.join(stale)} (facts missing or stale)")
            probe_round = await probe_hosts(ctx.ssh, stale)
            world.apply_round(probe_round.facts, probe_round.failures)

    async def _model_size(
        self, world: WorldStore, params: PlanDeploymentInput, ctx: ToolContext
    ) -> tuple[int | None, str | None]:
        """The weights' bytes, and the Hub's current commit when the Hub was asked for them."""
        if params.model_size_gb is not None:
            return round(params.model_size_gb * GB), None
        if world.model_size_bytes is not None:
            return world.model_size_bytes, None
        fetcher = ctx.web
        if fetcher is None:
            return None, None

        async def fetch(url: str) -> bytes:
            download = await fetcher.fetch(url)
            if download.status != 200:
                raise WebFetchError(f"{url} answered {download.status}")
            return download.body

        try:
            hub = await size_from_hub(params.model, fetch)
        except ModelSizeError as exc:
            ctx.report(str(exc))
            return None, None
        return hub.size_bytes, hub.revision


def _cached_sizes(
    world: WorldStore, params: PlanDeploymentInput, measured: dict[str, int | None]
) -> list[int | None]:
    """The model's bytes in each host's cache: measured, else from recon's cache listing."""
    listings = {h: f.hf_cache.models or {} for h, f in world.hosts.items()}
    return [
        measured[h] if h in measured else listings.get(h, {}).get(params.model)
        for h in params.hosts
    ]


async def _measured_cache_sizes(params: DeployChoices, ctx: ToolContext) -> dict[str, int | None]:
    """`du` of the model on each host when hf_cache is not the default folder recon lists.

    None: not there or unknown. For the default folder the world model's facts already answer.
    """
    if ctx.ssh is None or params.hf_cache == DEFAULT_HF_CACHE:
        return {}
    pool = ctx.ssh
    command = du_command(params.model, params.hf_cache)

    async def one(host: str) -> int | None:
        try:
            result = await pool.run(host, command, timeout=60)
        except SSHError:
            return None
        return size_from_du(result.stdout) if result.ok else None

    sizes = await asyncio.gather(*(one(h) for h in params.hosts))
    return dict(zip(params.hosts, sizes, strict=True))


async def _peer_ssh(
    steps: list[DeployStep],
    choices: DeployChoices,
    report: PreflightReport,
    supplies: ProvisionInput,
    ctx: ToolContext,
) -> list[Finding]:
    """Blockers for the worker addresses the head's commands name but its ssh cannot log in to."""
    if ctx.ssh is None or not choices.workers:
        return []
    fabric = report.fabric or {}
    candidates = {
        w: [fabric[w].ip if w in fabric else None, supplies.addresses.get(w, w)]
        for w in choices.workers
    }
    targets = addresses_used(steps, choices.head, candidates)
    return await peer_ssh_findings(ctx.ssh, choices.head, targets) if targets else []


def _blocker_lines(findings: list[Finding]) -> str:
    return "\n".join(f"- {f.summary}" for f in findings)


def to_plan(
    choices: DeployChoices,
    steps: list[DeployStep],
    report: PreflightReport,
    size: int | None,
    notes: Sequence[str] = (),
) -> Plan:
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
    proof = proof_step(choices.head, choices.port, choices.model) if choices.port else None
    return Plan(goal=goal, steps=[s.plan_step() for s in steps], risks=risks, proof=proof)


def _layout_worth_saying(layout: Layout) -> bool:
    """The goal says why these nodes and this split unless it is the plain case: every host
    given, one GPU each, tensor parallelism across them."""
    plain = layout.gpus_per_node == 1 and layout.pipeline_parallel == 1
    return layout.chose_subset or not plain
