"""`plan_deployment` and `endpoint_check`: deployment tools that read the world model.

plan_deployment only computes: preflight on fresh facts, the fixes the findings require, then
the recipe's steps, returned as a `Plan` ready for propose_plan. endpoint_check reaches the
head's serving port through an SSH port forward and measures it. Both are read-only.
"""

from __future__ import annotations

import asyncio
import re

import httpx
from pydantic import BaseModel, Field

from agent.world.model import WorldModel
from tools.base import Tool, ToolContext, ToolResult
from tools.checks import Finding
from tools.deploy.choices import DeployChoices
from tools.deploy.endpoint import EndpointClient, EndpointError, check_endpoint
from tools.deploy.fabric import FabricPath
from tools.deploy.fit import (
    DEFAULT_HF_CACHE,
    GB,
    ModelSizeError,
    du_command,
    size_from_du,
    size_from_hub,
)
from tools.deploy.preflight import PreflightInput, PreflightReport, run_preflight
from tools.deploy.recipes import build_recipe
from tools.deploy.rollout import order_steps
from tools.deploy.steps import DeployStep, StepCheck
from tools.plan import Plan, PlanStep
from tools.recon.probe import probe_hosts
from tools.ssh.errors import SSHError
from tools.web.errors import WebFetchError
from tools.web.fetcher import WebFetcher

WEB_EXTRAS_KEY = "web"
ENDPOINT_TIMEOUT_S = 900.0


class PlanDeploymentInput(DeployChoices):
    model_size_gb: float | None = Field(
        default=None, gt=0, description="Weight size in GB if known (else looked up)."
    )
    links_tried: list[str] = Field(
        default_factory=list,
        description="Hosts where `ip link set … up` was already run and the RoCE link stayed down.",
    )


class PlanDeploymentTool(Tool[PlanDeploymentInput]):
    name = "plan_deployment"
    description = (
        "Compute a deployment plan for a model across hosts (recipe vllm-ray, vllm-multinode or "
        "sglang; the first host is the head). Runs preflight on the world model (re-probing "
        "stale hosts), checks the model fits, adds the fixes the findings need (stop a "
        "container holding memory, bring a RoCE link up, pull a missing image) before the "
        "recipe's commands, and returns a Plan ready for propose_plan. Read-only."
    )
    Input = PlanDeploymentInput

    def __init__(self, world: WorldModel, max_age_s: float = 600.0) -> None:
        self.world = world
        self.max_age_s = max_age_s
        self.computed: dict[str, list[DeployStep]] = {}  # plan hash -> its steps, for rollout

    def hosts(self, params: PlanDeploymentInput) -> list[str]:
        return list(params.hosts)

    def summary(self, params: PlanDeploymentInput) -> str:
        return f"{params.recipe} {params.model} on {', '.join(params.hosts)}"

    async def run(self, params: PlanDeploymentInput, ctx: ToolContext) -> ToolResult:
        await self._refresh(params.hosts, ctx)
        size = await self._model_size(params, ctx)
        cached = await _measured_cache_sizes(params, ctx)
        if size is None:
            size = max((v for v in self._cached_sizes(params, cached) if v), default=None)
        choices = DeployChoices.model_validate(
            params.model_dump(exclude={"model_size_gb", "links_tried"})
        ).resolved()
        report = run_preflight(
            PreflightInput(
                hosts=self.world.hosts,
                unreachable=self.world.unreachable,
                model_size_bytes=size,
                cached_bytes=cached,
                links_tried=frozenset(params.links_tried),
            ),
            choices,
        )
        data = {"preflight": [f.model_dump() for f in report.findings], "model_size_bytes": size}
        if report.fabric is None:
            return ToolResult(
                text="Cannot plan this deployment yet:\n" + _blocker_lines(report.blockers),
                is_error=True,
                data=data,
            )
        fixes, unresolved = fix_steps(report, choices)
        recipe = build_recipe(choices, report.fabric)
        for step in recipe.steps:
            step.needs = [*step.needs, *(f.id for f in fixes)]
        ordered = order_steps([*fixes, *recipe.steps])
        plan = to_plan(choices, ordered, report, size)
        self.computed[plan.digest()] = ordered
        data.update(
            plan=plan.model_dump(mode="json"),
            steps=[s.model_dump() for s in ordered],
            fabric={h: p.__dict__ for h, p in report.fabric.items()},
            fit=report.fit.lines if report.fit else None,
        )
        text = plan.render() + "\n\nPreflight:\n" + report.render()
        if unresolved:
            text = (
                "The plan cannot succeed until these are done (not fixable from here):\n"
                + _blocker_lines(unresolved)
                + "\n\n"
                + text
            )
        return ToolResult(text=text, is_error=bool(unresolved), data=data)

    async def _refresh(self, hosts: list[str], ctx: ToolContext) -> None:
        stale = [h for h in self.world.stale_hosts(hosts, self.max_age_s)]
        if not stale or ctx.ssh is None:
            return
        known = set(ctx.ssh.inventory.names())
        stale = [h for h in stale if h in known]
        if stale:
            ctx.report(f"re-probing {', '.join(stale)} (facts missing or stale)")
            probe_round = await probe_hosts(ctx.ssh, stale)
            self.world.apply_round(probe_round.facts, probe_round.failures)

    async def _model_size(self, params: PlanDeploymentInput, ctx: ToolContext) -> int | None:
        if params.model_size_gb is not None:
            return round(params.model_size_gb * GB)
        if self.world.model_size_bytes is not None:
            return self.world.model_size_bytes
        fetcher = ctx.extras.get(WEB_EXTRAS_KEY)
        if not isinstance(fetcher, WebFetcher):
            return None

        async def fetch(url: str) -> bytes:
            download = await fetcher.fetch(url)
            if download.status != 200:
                raise WebFetchError(f"{url} answered {download.status}")
            return download.body

        try:
            return await size_from_hub(params.model, fetch)
        except ModelSizeError as exc:
            ctx.report(str(exc))
            return None

    def _cached_sizes(
        self, params: PlanDeploymentInput, measured: dict[str, int | None]
    ) -> list[int | None]:
        """The model's bytes in each host's cache: measured, else from recon's cache listing."""
        listings = {h: f.hf_cache.models or {} for h, f in self.world.hosts.items()}
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


def _blocker_lines(findings: list[Finding]) -> str:
    return "\n".join(f"- {f.summary}" for f in findings)


def fix_steps(
    report: PreflightReport, choices: DeployChoices
) -> tuple[list[DeployStep], list[Finding]]:
    """Steps that clear the blockers Scout can clear remotely, and the blockers it cannot."""
    steps: list[DeployStep] = []
    unresolved: list[Finding] = []
    holders = report.fit.blocking_containers if report.fit else {}
    stopped = {name for names in holders.values() for name in names}
    for check in report.blockers:
        if check.check == "memory" and holders:
            steps += [
                stop_container_step(h, name) for h, names in holders.items() for name in names
            ]
        elif check.check == "fabric" and not check.needs_person and report.fabric:
            steps += [link_up_step(p) for p in report.fabric.values() if not p.link_up]
        elif check.check == "image":
            steps += [pull_step(h, choices.image or "") for h in check.hosts]
        elif check.check == "ports" and any(name in check.message for name in stopped):
            continue
        else:
            unresolved.append(check)
            if check.needs_person:
                steps.append(by_hand_step(check))
    kinds = ["stop", "link-up", "pull", "by-hand"]
    steps.sort(key=lambda s: kinds.index(s.id.split(":", 1)[0]))
    return steps, unresolved


def stop_container_step(host: str, name: str) -> DeployStep:
    return DeployStep(
        id=f"stop:{host}:{name}",
        title=f"stop {name} to free its memory",
        host=host,
        actions=[f"docker stop {name}"],
        check=StepCheck(
            host=host,
            command="docker ps --format '{{.Names}}'",
            expect=rf"^{name}$",
            absent=True,
            description=f"{name} is no longer running",
        ),
        rollback=f"docker start {name}",
        expected_downtime=f"whatever {name} serves stops until it is started again",
    )


def link_up_step(path: FabricPath) -> DeployStep:
    netdevs = path.down_netdevs or (path.netdev,)
    hca = path.hcas[0] if path.hcas else None
    expect = rf"==> {path.netdev} \(Up\)" if hca else None
    return DeployStep(
        id=f"link-up:{path.host}",
        title=f"bring the RoCE link up ({', '.join(netdevs)})",
        host=path.host,
        actions=[f"sudo ip link set {n} up" for n in netdevs],
        check=StepCheck(
            host=path.host,
            command="ibdev2netdev",
            expect=expect,
            description=f"ibdev2netdev shows {path.netdev} (Up); if it stays Down, reseat the "
            "cable in the same cage on both ends (needs a person)",
        ),
        rollback=" && ".join(f"sudo ip link set {n} down" for n in netdevs),
    )


def pull_step(host: str, image: str) -> DeployStep:
    return DeployStep(
        id=f"pull:{host}",
        title=f"pull {image}",
        host=host,
        actions=[f"docker pull {image}"],
        check=StepCheck(
            host=host,
            command="docker images --format '{{.Repository}}:{{.Tag}}'",
            expect=f"^{re.escape(image)}$",
            description=f"{image} is listed",
        ),
        rollback=f"docker rmi {image}",
    )


def by_hand_step(check: Finding) -> DeployStep:
    host = check.hosts[0] if check.hosts else ""
    return DeployStep(
        id=f"by-hand:{check.check}:{host}",
        title=f"by hand: {check.fix or check.message}",
        host=host,
        actions=[f"(a person) {check.fix or check.message}"],
        check=StepCheck(
            host=host,
            command="ibdev2netdev",
            expect=r"\(Up\)",
            description="a ConnectX port shows (Up)",
        ),
        rollback="none (physical change)",
        by_hand=True,
    )


def to_plan(
    choices: DeployChoices, steps: list[DeployStep], report: PreflightReport, size: int | None
) -> Plan:
    risks = [f.summary for f in report.findings if f.severity == "warning"]
    if report.fabric and any(p.ip is None for p in report.fabric.values()):
        unknown = [h for h, p in report.fabric.items() if p.ip is None]
        risks.append(
            f"fabric address of {', '.join(unknown)} unknown while its link is down: the commands "
            "read it on the host (`ip -4 -br addr show dev …`); re-run recon and plan_deployment "
            "after the link is up for literal addresses"
        )
    where = f"{size / GB:.0f} GB " if size else ""
    goal = (
        f"serve {choices.model} ({where}weights) with {choices.recipe}, "
        f"TP={choices.tensor_parallel}, on {', '.join(choices.hosts)}; "
        f"endpoint {choices.head}:{choices.port}"
    )
    return Plan(
        goal=goal,
        steps=[
            PlanStep(
                title=s.title,
                hosts=[s.host] if s.host else [],
                actions=s.actions,
                expected_downtime=s.expected_downtime,
                rollback=s.rollback,
                success_check=s.check.render(),
            )
            for s in steps
        ],
        risks=risks,
    )


class EndpointCheckInput(BaseModel):
    host: str = Field(description="The head host serving the endpoint.")
    port: int = Field(default=8000, ge=1, le=65535)
    model: str | None = Field(default=None, description="Model id; default: the first served.")
    concurrency: int = Field(default=4, ge=1, le=64)
    max_tokens: int = Field(default=128, ge=8, le=4096)


class EndpointCheckTool(Tool[EndpointCheckInput]):
    name = "endpoint_check"
    description = (
        "Prove a served model through an SSH port forward to the head: GET /health, "
        "GET /v1/models, one chat completion, then time to first token and tokens/s for one "
        "stream and for `concurrency` streams at once. Read-only."
    )
    Input = EndpointCheckInput

    def hosts(self, params: EndpointCheckInput) -> list[str]:
        return [params.host]

    def timeout_s(self, params: EndpointCheckInput) -> float:
        return ENDPOINT_TIMEOUT_S

    async def run(self, params: EndpointCheckInput, ctx: ToolContext) -> ToolResult:
        if ctx.ssh is None:
            return ToolResult.error(
                "endpoint_check needs an inventory: start Scout with --inventory FILE."
            )
        try:
            conn = await ctx.ssh.connection(params.host)
            listener = await conn.forward_local_port("127.0.0.1", 0, "localhost", params.port)
        except (SSHError, OSError) as exc:
            return ToolResult.error(
                f"cannot open a port forward to {params.host}:{params.port}: {exc}"
            )
        where = f"{params.host}:{params.port}"
        try:
            async with httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{listener.get_port()}",
                timeout=httpx.Timeout(300.0, connect=10.0),
                trust_env=False,
            ) as http:
                ctx.report(f"checking {where}")
                report = await check_endpoint(
                    EndpointClient(http, where),
                    model=params.model,
                    concurrency=params.concurrency,
                    max_tokens=params.max_tokens,
                )
        except EndpointError as exc:
            return ToolResult.error(str(exc), host=params.host)
        finally:
            listener.close()
        return ToolResult(
            text=report.render(),
            data={"endpoint": where, **report.to_data()},
            meta={"host": params.host, "headline": report.render()},
        )
