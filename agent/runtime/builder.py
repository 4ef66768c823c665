"""The one builder: a session's parts made in order, each given what it needs when it is made.

The recorder comes first, so everything that records (the session state, the world model, the
SSH pool's host-key notices, the gate) gets its emit function in its constructor; then the
rules, the approver and the gate; then the tools and their typed context; then the session.
Nothing is wired after construction. Every face (chat, headless run, demo, replay) builds its
session with `open_runtime`; `open_recorder` and `build_session` are the two steps it shares
with sessions that bring their own tools (tests, scripts).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from agent.loop.briefing import render_briefing
from agent.loop.calls import Gate
from agent.loop.compaction import CallLedger, CompactionPolicy
from agent.loop.events import Notice, SessionStart, StateChangeEvent, TodoUpdate
from agent.loop.executor import Executor, ExecutorLimits
from agent.loop.model_turn import ModelClient
from agent.loop.recorder import Recorder, SessionListener
from agent.loop.resumed import RebuiltSession
from agent.loop.session import Budgets, Session, SessionParts
from agent.loop.transcript import TranscriptWriter
from agent.runtime.deployment_record import RecordStore
from agent.runtime.grant_uses import use_again
from agent.runtime.own_work import OwnWork
from agent.runtime.prompts import system_prompt
from agent.runtime.reattach import reattach_jobs
from agent.runtime.record_keeper import RecordKeeper
from agent.runtime.settings import Settings
from agent.runtime.settings_rules import settings_rules
from agent.safety.approvals import Approver
from agent.safety.gate import PolicyGate
from agent.safety.redact import Redactor
from agent.safety.rules import RuleSet
from agent.safety.shell.judge import inventory_judge
from agent.world.job_events import job_event_listener
from agent.world.model import WorldModel, transcript_listener
from tools.base import Tool, ToolContext
from tools.deploy.proof.call import proof_soak_s
from tools.deploy.rollout.state import SessionState
from tools.deployment_status import DeploymentStatusTool, StatusReader
from tools.docker_ctl import DockerCtl
from tools.endpoint_check import EndpointCheckTool
from tools.job_logs import JobLogs
from tools.job_start import JobStart
from tools.job_status import JobStatus
from tools.job_stop import JobStop
from tools.job_wait import JobWait
from tools.plan_deployment import PlanDeploymentTool
from tools.propose_plan import ProposePlanTool
from tools.recall import RecallResultTool
from tools.recon_tool import ReconTool
from tools.registry import ToolRegistry
from tools.risk.shell_judge import ShellJudge
from tools.rollout_step import RolloutStepTool
from tools.ssh import Inventory, SSHPool
from tools.ssh.passphrase import PassphrasePrompt
from tools.ssh_exec import SSHExec
from tools.text.new_files import NewFile
from tools.todo import TodoItem, TodoList, TodoWriteTool
from tools.wall import HostWalls
from tools.web import WebFetcher, WebSettings
from tools.web.ssrf import Resolver, system_resolve
from tools.web_fetch import WebFetchTool
from tools.world_note import WorldNoteTool

if TYPE_CHECKING:
    from agent.loop.model_client import AnthropicClient

# Given the session's rules, so a terminal approver can add the operator's "allow like this".
ApproverFactory = Callable[[RuleSet], Approver | None]


@dataclass
class Runtime:
    session: Session
    gate: PolicyGate
    state: SessionState
    world: WorldModel
    transcript_path: Path
    web: WebFetcher
    pool: SSHPool | None = None
    resume_note: str | None = None  # what a resume found of the session's jobs, for the model

    def with_resume_note(self, text: str) -> str:
        """`text` after the resume's job report, the first time only (the model reads it)."""
        note, self.resume_note = self.resume_note, None
        return f"{note}\n\n{text}" if note else text

    async def aclose(self) -> None:
        if self.pool is not None:
            await self.pool.close()
        await self.web.aclose()
        self.session.recorder.close()


def history_settings(compaction: CompactionPolicy, batch_budget_chars: int) -> dict[str, Any]:
    """The Settings that shape the history, as the session start records them for replays."""
    return {
        "compact_history": compaction.enabled,
        "compact_keep_turns": compaction.keep_turns,
        "compact_min_chars": compaction.min_chars,
        "compact_chunk_chars": compaction.chunk_chars,
        "compact_fold_after_turns": compaction.fold_after_turns,
        "batch_result_chars": batch_budget_chars,
    }


def new_transcript(settings: Settings, prefix: str = "scout") -> NewFile:
    """A transcript of its own in the settings' folder (named when created; never shared)."""
    return NewFile(settings.transcripts_dir, prefix, ".jsonl")


def model_client_for(settings: Settings) -> AnthropicClient:
    """The real SDK client, with the key and base URL the settings resolved (the SDK is imported
    only here: faces that build no model client start without it)."""
    from agent.loop.model_client import AnthropicClient

    key = settings.api_key.get_secret_value() if settings.api_key else None
    return AnthropicClient(api_key=key, base_url=settings.base_url)


def open_recorder(
    transcript_path: Path | NewFile | None,
    redactor: Redactor,
    *,
    listeners: Iterable[SessionListener] = (),
    session_id: str | None = None,
) -> Recorder:
    """The session's recorder, made first; without a path events only reach the listeners."""
    session_id = session_id or uuid.uuid4().hex[:12]
    writer = TranscriptWriter(transcript_path, session_id, redactor) if transcript_path else None
    return Recorder(writer, session_id, listeners)


def build_session(
    recorder: Recorder,
    *,
    client: ModelClient,
    tools: Iterable[Tool],
    context: ToolContext,
    system_prompt: str,
    model: str,
    redactor: Redactor,
    gate: Gate | None = None,
    budgets: Budgets | None = None,
    limits: ExecutorLimits | None = None,
    compaction: CompactionPolicy | None = None,
    batch_budget_chars: int | None = None,
    mode: str = "ask",
    goal: str | None = None,
    resume: RebuiltSession | None = None,
    state: SessionState | None = None,
    hosts: dict[str, str] | None = None,
    scenario: str | None = None,
) -> Session:
    """A ready session (plus todo_write and recall_result), resumed if asked, its start recorded.

    `state` is the session state the tools were built with (a fresh one for tools that need
    none); the briefing reads it and a resume restores into it."""
    state = state if state is not None else SessionState()
    defaults = Settings()
    todo = TodoList(
        on_change=lambda items: recorder.emit(
            TodoUpdate(items=[item.model_dump() for item in items])
        )
    )
    ledger = resume.ledger if resume is not None else CallLedger()
    registry = ToolRegistry([*tools, TodoWriteTool(todo), RecallResultTool(ledger.full_text)])
    ledger.kept_whole = registry.plan_approvers()
    executor = Executor(registry, context, gate=gate, limits=limits or defaults.executor_limits())

    def briefing(turn: int) -> str:
        return render_briefing(
            turn, todo=todo, state=state, world=context.world, folded=ledger.folded()
        )

    parts = SessionParts(
        client=client,
        executor=executor,
        recorder=recorder,
        system_prompt=system_prompt,
        model=model,
        budgets=budgets or defaults.budgets(),
        redactor=redactor,
        compaction=compaction or defaults.compaction_policy(),
        batch_budget_chars=batch_budget_chars or defaults.batch_result_chars,
        briefing=briefing,
        todo=todo,
        ledger=ledger,
        session_id=recorder.session_id,
    )
    session = Session(parts, registry.definitions())
    recorder.emit(
        SessionStart(
            model=model,
            mode=mode,
            tools=registry.names(),
            goal=goal,
            resumed_from=resume.session_id if resume else None,
            history=history_settings(parts.compaction, parts.batch_budget_chars),
            hosts=hosts or {},
            scenario=scenario,
        )
    )
    if resume is not None:
        _resume(session, state, registry, resume)
    return session


def _resume(
    session: Session, state: SessionState, registry: ToolRegistry, resume: RebuiltSession
) -> None:
    """Carry the conversation, the todo list and the session state over; say what happened."""
    session.messages = resume.messages
    session.todo.replace([TodoItem.model_validate(item) for item in resume.todo_items])
    state.restore(resume.state_changes)
    notices = [*resume.problems, *(f"not restored: {why}" for why in resume.refused)]
    if resume.interrupted_calls:
        notices.append(
            f"{len(resume.interrupted_calls)} call(s) had not finished when the session "
            "stopped; the model is told their state is unknown"
        )
    withdrawn = use_again(state.plan.grant, registry, resume.granted_calls)
    if withdrawn is not None:
        notices.append(f"the plan's steps ask again: {withdrawn}")
    if state.plan.approved_hash is not None:
        rollout = state.rollouts.get(state.plan.approved_hash)
        where = f"; its rollout: {rollout.summary()}" if rollout else ""
        notices.append(f"the approved plan {state.plan.approved_hash} holds again{where}")
    for message in notices:
        session.recorder.emit(Notice(level="warning", kind="resumed", message=message))


async def open_runtime(
    settings: Settings,
    *,
    client: ModelClient,
    approver_factory: ApproverFactory,
    transcript_path: Path | NewFile | None = None,
    goal: str | None = None,
    redactor: Redactor | None = None,
    listeners: list[SessionListener] | None = None,
    web_resolve: Resolver = system_resolve,
    web_transport: httpx.AsyncBaseTransport | None = None,
    resume: RebuiltSession | None = None,
    passphrase_prompt: PassphrasePrompt | None = None,
    judge: ShellJudge | None = None,
    walled_only: bool = False,
    scenario: str | None = None,
    deployments: Callable[[SSHPool], StatusReader] | None = None,
) -> Runtime:
    """A ready session on the settings' hosts; the caller owns it and must `aclose()` it.

    `passphrase_prompt` asks for a protected key's passphrase; without one (headless) such a key
    must be in ssh-agent. `judge` classifies shell for every tool that runs it (by default the
    inventory's judge); only tests pass another (one that calls everything read-only shows what
    the wall alone stops, tests/system/). `walled_only`: ssh_exec runs every command inside the
    wall, unasked, and nothing outside it (`scout exec --walled`). `scenario` is the simulator's,
    when the hosts are simulated; the session start records it with the hosts. Hosts neither it
    nor the inventory's labels call simulated are real: proofs soak 30 minutes there unless
    asked otherwise. `deployments`
    reads the recorded deployments over the session's pool (agent/daytwo/status.py, which this
    room may not import): given, the model has `deployment_status`.
    """
    redactor = redactor or settings.redactor()
    inventory = Inventory.load(settings.inventory) if settings.inventory is not None else None
    writer = TranscriptWriter(
        transcript_path or new_transcript(settings), uuid.uuid4().hex[:12], redactor
    )
    recorder = Recorder(writer, writer.session_id, listeners or ())
    transcript_path = writer.path
    state = SessionState(record=lambda change: recorder.emit(StateChangeEvent(change=change)))
    world = WorldModel(
        on_change=transcript_listener(recorder.emit), on_job=job_event_listener(recorder.emit)
    )
    recorder.listeners.append(OwnWork(world))  # containers a command created: Scout's own
    # a proven deployment leaves its record (scout status, scout teardown read it)
    records = RecordStore(settings.deployments_dir)
    recorder.listeners.append(RecordKeeper(records, transcript_path))
    web_settings = WebSettings(
        allowed_hosts=tuple(settings.web_allowed_hosts), cache_dir=settings.web_cache_dir
    )
    web = WebFetcher(web_settings, resolve=web_resolve, transport=web_transport)
    pool = None
    tools: list[Tool] = []
    walls = HostWalls()
    if inventory is not None:  # the tools that reach hosts exist only with an inventory
        pool = _ssh_pool(inventory, settings, recorder, passphrase_prompt)
        # proofs soak 30 minutes on real hosts, none on the simulator's (unless asked)
        soak_s = proof_soak_s(simulated=scenario is not None or inventory.simulated())
        judge = judge or inventory_judge(
            word for name in inventory.names() for word in (name, inventory.get(name).address)
        )
        tools += [
            SSHExec(pool, judge, walls, walled_only=walled_only),
            DockerCtl(pool, judge),
            ReconTool(pool, walls),
            PlanDeploymentTool(  # a session that reads the records checks plans against them
                state,
                pool,
                recorded=records.recorded if deployments is not None else None,
                proof_soak_s=soak_s,
            ),
            RolloutStepTool(state, pool, judge),
            EndpointCheckTool(state, pool, soak_s),
            JobStart(pool, judge),
            JobStatus(pool),
            JobWait(pool),
            JobLogs(pool),
            JobStop(pool),
        ]
        if deployments is not None:
            tools.append(DeploymentStatusTool(deployments(pool)))
    # propose_plan asks the gate, made below: its rules are held to what these tools declare
    tools += [
        WorldNoteTool(),
        WebFetchTool(web_settings),
        ProposePlanTool(state, lambda plan: gate.review_plan(plan, ProposePlanTool.name)),
    ]
    rules = settings_rules(settings.rules, tools)  # as `scout policy check` reads them
    gate = PolicyGate(
        mode=settings.mode,
        rules=rules,
        plan=state.plan,
        approver=approver_factory(rules),
        emit=recorder.emit,
        approval_ttl_s=settings.approval_timeout_s,
        redactor=redactor,
    )
    context = ToolContext(
        spill_dir=transcript_path.parent / "spill",
        world=world,
        web=web,
        redact=redactor.text,
    )
    session = build_session(
        recorder,
        client=client,
        tools=tools,
        context=context,
        system_prompt=system_prompt(),
        model=settings.model,
        redactor=redactor,
        gate=gate,
        budgets=settings.budgets(),
        limits=settings.executor_limits(),
        compaction=settings.compaction_policy(),
        batch_budget_chars=settings.batch_result_chars,
        mode=settings.mode,
        goal=goal,
        resume=resume,
        state=state,
        hosts=inventory.where() if inventory is not None else None,
        scenario=scenario,
    )
    for host, container, by in state.created_containers():  # a resume: what Scout created
        world.record_created(host, container, by)
    note = None
    if resume is not None and resume.jobs:
        note = await reattach_jobs(pool, world, resume.jobs)
        if note is not None:
            recorder.emit(Notice(level="info", kind="jobs_resumed", message=note))
    return Runtime(session, gate, state, world, transcript_path, web, pool, note)


def _ssh_pool(
    inventory: Inventory,
    settings: Settings,
    recorder: Recorder,
    passphrase_prompt: PassphrasePrompt | None,
) -> SSHPool:
    """The session's pooled connections; a newly trusted host key is recorded as a notice."""

    def on_new_host_key(host: str, fingerprint: str) -> None:
        message = f"trusted a new host key for {host} ({fingerprint}) and saved it"
        recorder.emit(Notice(level="warning", kind="host_key_trusted", message=message))

    return SSHPool(
        inventory,
        trust_new_hosts=settings.trust_new_hosts,
        on_new_host_key=on_new_host_key,
        passphrase_prompt=passphrase_prompt,
    )
