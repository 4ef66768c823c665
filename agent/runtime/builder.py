"""Assembling a live session from settings: inventory and SSH pool, tools, gate, transcript.

Every face (chat, headless run, demo) builds its session here, so they differ only in the model
client, the approver and what they show.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx

from agent.loop.events import Notice
from agent.loop.executor import ExecutorLimits
from agent.loop.model_client import AnthropicClient, ModelClient
from agent.loop.recorder import SessionListener
from agent.loop.session import Budgets, Session
from agent.replay.resume import RebuiltSession
from agent.runtime.prompts import system_prompt
from agent.runtime.session_builder import build_session
from agent.runtime.settings import Settings
from agent.safety.approvals import Approver
from agent.safety.gate import PolicyGate
from agent.safety.redact import Redactor
from agent.safety.rules import RuleSet
from agent.world.deploy_tools import EndpointCheckTool, PlanDeploymentTool
from agent.world.feed import DockerFeed, EndpointFeed
from agent.world.model import WorldModel
from agent.world.rollout_tool import RolloutStepTool
from agent.world.world_tools import ReconTool, WorldNoteTool, transcript_listener
from tools.base import Tool, ToolContext
from tools.docker_ctl import DockerCtl
from tools.plan import PlanState, ProposePlanTool
from tools.ssh import Inventory, SSHPool
from tools.ssh_exec import SSHExec
from tools.web import WebFetcher, WebSettings
from tools.web.ssrf import Resolver, system_resolve
from tools.web_fetch import WebFetchTool

ApproverFactory = Callable[[PolicyGate], Approver | None]


@dataclass
class Runtime:
    session: Session
    gate: PolicyGate
    plan: PlanState
    world: WorldModel
    transcript_path: Path
    web: WebFetcher
    pool: SSHPool | None = None

    async def aclose(self) -> None:
        if self.pool is not None:
            await self.pool.close()
        await self.web.aclose()
        self.session.recorder.close()


def new_transcript_path(settings: Settings) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return settings.transcripts_dir / f"scout-{stamp}.jsonl"


def model_client_for(settings: Settings) -> AnthropicClient:
    """The real SDK client, with the key and base URL the settings resolved."""
    key = settings.api_key.get_secret_value() if settings.api_key else None
    return AnthropicClient(api_key=key, base_url=settings.base_url)


def redactor_for(settings: Settings) -> Redactor:
    redactor = Redactor()
    if settings.api_key is not None:
        redactor.add_secret(settings.api_key.get_secret_value())
    return redactor


async def open_runtime(
    settings: Settings,
    *,
    client: ModelClient,
    approver_factory: ApproverFactory,
    transcript_path: Path | None = None,
    goal: str | None = None,
    redactor: Redactor | None = None,
    listeners: list[SessionListener] | None = None,
    web_resolve: Resolver = system_resolve,
    web_transport: httpx.AsyncBaseTransport | None = None,
    resume: RebuiltSession | None = None,
) -> Runtime:
    """A ready session; the caller owns it and must `aclose()` the runtime."""
    redactor = redactor or redactor_for(settings)
    transcript_path = transcript_path or new_transcript_path(settings)
    plan = PlanState()
    world = WorldModel()
    web = WebFetcher(
        WebSettings(
            allowed_hosts=tuple(settings.web_allowed_hosts),
            cache_dir=settings.web_cache_dir,
        ),
        resolve=web_resolve,
        transport=web_transport,
    )
    runtime_ref: list[Runtime] = []
    pool = None
    tools: list[Tool] = []
    if settings.inventory is not None:
        inventory = Inventory.load(settings.inventory)

        def on_new_host_key(host: str, fingerprint: str) -> None:
            notice = Notice(
                level="warning",
                kind="host_key_trusted",
                message=f"trusted a new host key for {host} ({fingerprint}) and saved it",
            )
            for runtime in runtime_ref:  # connections open only after the runtime exists
                runtime.session.recorder.emit(notice)

        pool = SSHPool(
            inventory,
            trust_new_hosts=settings.trust_new_hosts,
            on_new_host_key=on_new_host_key,
        )
        planner = PlanDeploymentTool(world)
        tools += [
            SSHExec(),
            DockerCtl(),
            ReconTool(world, inventory.names()),
            planner,
            RolloutStepTool(planner, plan),
            EndpointCheckTool(),
        ]
    gate = PolicyGate(
        mode=settings.mode,
        rules=RuleSet.from_config(settings.rules),
        plan=plan,
        approval_ttl_s=settings.approval_timeout_s,
        redactor=redactor,
    )
    gate.approver = approver_factory(gate)
    tools += [WorldNoteTool(world), WebFetchTool(), ProposePlanTool(plan, gate.review_plan)]
    context = ToolContext(
        spill_dir=transcript_path.parent / "spill",
        ssh=pool,
        extras={"web": web},
        redact=redactor.text,
    )
    session = build_session(
        client=client,
        tools=tools,
        context=context,
        system_prompt=system_prompt(),
        model=settings.model,
        transcript_path=transcript_path,
        gate=gate,
        budgets=Budgets(
            max_turns=settings.max_turns,
            max_output_tokens=settings.max_output_tokens,
            max_cost_usd=settings.max_cost_usd,
            max_tokens_per_turn=settings.max_tokens_per_turn,
        ),
        redactor=redactor,
        limits=ExecutorLimits(default_timeout_s=settings.tool_timeout_s),
        mode=settings.mode,
        goal=goal,
        listeners=listeners,
        resume=resume,
    )
    gate.emit = session.recorder.emit
    world.on_change(transcript_listener(session.recorder.emit))
    session.recorder.listeners += [DockerFeed(world), EndpointFeed(world)]
    runtime = Runtime(session, gate, plan, world, transcript_path, web, pool)
    runtime_ref.append(runtime)
    return runtime
