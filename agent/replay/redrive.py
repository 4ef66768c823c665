"""Re-driving a recorded session against a fresh simulated cluster, with tools running for real.

The model's turns come from the transcript (ReplayClient); every tool call runs live against the
simulator; approvals are answered as they were recorded, or by a person. Whatever differs from
the recording is reported as drift.
"""

from __future__ import annotations

import functools
import ssl
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from agent.loop.events import (
    Event,
    SessionStart,
    ToolResultEvent,
    UserMessage,
)
from agent.loop.model_turn import ModelClient
from agent.loop.recorder import SessionListener
from agent.replay.client import ReplayClient, ReplayReport
from agent.replay.recorded_approvals import RecordedApprover
from agent.runtime.builder import ApproverFactory, Runtime, open_runtime
from agent.runtime.settings import Settings
from agent.safety.modes import MODES, Mode
from sim.cluster import SimCluster
from sim.docs import DocsSite
from tools.text.new_files import NewFile
from tools.web.ssrf import system_resolve

DOCS_HOST = "docs.spark.sim"


@dataclass
class RedriveResult:
    report: ReplayReport
    transcript_path: Path
    results: list[ToolResultEvent] = field(default_factory=list)

    def endpoint_check(self) -> ToolResultEvent | None:
        """The last successful endpoint check: a deployment's proof."""
        for result in reversed(self.results):
            if result.name == "endpoint_check" and not result.is_error:
                return result
        return None


class _Collect(SessionListener):
    def __init__(self) -> None:
        self.results: list[ToolResultEvent] = []

    def on_event(self, event: Event) -> None:
        if isinstance(event, ToolResultEvent):
            self.results.append(event)


def recorded_history_settings(start: SessionStart | None) -> dict[str, Any]:
    """The recording's compaction settings; a recording from before compaction had none."""
    if start is None or not start.history:
        return {"compact_history": False}
    return start.history


async def resolve_docs(host: str, port: int) -> list[str]:
    """The simulated docs site lives on loopback; every other name resolves as usual."""
    if host == DOCS_HOST:
        return ["127.0.0.1"]
    return await system_resolve(host, port)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx's default verification, built once: loading the CA bundle costs ~50 ms, and a
    chaos run opens two runtimes a session."""
    return httpx.create_ssl_context()


class DocsTransport(httpx.AsyncBaseTransport):
    """Sends requests for the simulated docs site to its local port; others go out unchanged."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._inner = httpx.AsyncHTTPTransport(verify=_tls_context())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.headers.get("host") == DOCS_HOST:
            request.url = request.url.copy_with(port=self.port)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


@asynccontextmanager
async def sim_runtime(
    scenario: str,
    *,
    client: ModelClient,
    approver_factory: ApproverFactory,
    model: str = "claude-replay",
    mode: Mode = "ask",
    goal: str | None = None,
    listeners: list[SessionListener] | None = None,
    transcript_path: Path | NewFile | None = None,
    settings: dict[str, Any] | None = None,
) -> AsyncIterator[Runtime]:
    """A live session on a fresh simulated cluster (and its docs site), torn down on exit.

    `settings` are further Settings fields (e.g. a recording's compaction settings).
    """
    with tempfile.TemporaryDirectory(prefix="scout-sim-") as scratch, DocsSite() as docs:
        root = Path(scratch)
        async with (
            SimCluster(scenario, root / "sim") as sim,
            cluster_runtime(
                sim,
                docs.port,
                root,
                client=client,
                approver_factory=approver_factory,
                model=model,
                mode=mode,
                goal=goal,
                listeners=listeners,
                transcript_path=transcript_path,
                settings=settings,
            ) as runtime,
        ):
            yield runtime


def _folder(transcript: Path | NewFile | None) -> Path | None:
    """The folder the transcript goes to, for the session's other files (spills, reports)."""
    if transcript is None:
        return None
    return transcript.folder if isinstance(transcript, NewFile) else transcript.parent


@asynccontextmanager
async def cluster_runtime(
    sim: SimCluster,
    docs_port: int,
    root: Path,
    *,
    client: ModelClient,
    approver_factory: ApproverFactory,
    model: str = "claude-replay",
    mode: Mode = "ask",
    goal: str | None = None,
    listeners: list[SessionListener] | None = None,
    transcript_path: Path | NewFile | None = None,
    settings: dict[str, Any] | None = None,
) -> AsyncIterator[Runtime]:
    """A live session on a running simulated cluster, its scratch files under `root`.

    Many sessions may share one cluster in turn (the chaos model does): each has its own
    runtime, connections and transcript, and closes them on exit.
    """
    settings = Settings(
        model=model,
        mode=mode,
        inventory=sim.write_inventory(root / "sim" / "inventory.yaml"),
        transcripts_dir=_folder(transcript_path) or root / "t",
        log_file=root / "scout.log",
        web_allowed_hosts=[DOCS_HOST],
        web_cache_dir=root / "web-cache",  # the sim's pages stay out of the user's cache
        # a simulated deployment is no record of the user's (unless a caller names a folder)
        **{"deployments_dir": root / "deployments", **(settings or {})},
    )
    runtime = await open_runtime(
        settings,
        client=client,
        approver_factory=approver_factory,
        transcript_path=transcript_path,
        goal=goal,
        listeners=listeners,
        web_resolve=resolve_docs,
        web_transport=DocsTransport(docs_port),
        scenario=sim.scenario.name,
    )
    try:
        yield runtime
    finally:
        await runtime.aclose()


async def redrive(
    events: list[Event],
    scenario: str,
    *,
    listeners: list[SessionListener] | None = None,
    approver_factory: ApproverFactory | None = None,
    answers: RecordedApprover | None = None,
    pace_s: float = 0.0,
    transcript_path: Path | NewFile | None = None,
    stop_on_drift: bool = False,
    serve: Callable[[ReplayClient], ModelClient] | None = None,
) -> RedriveResult:
    """Play `events` against a fresh `scenario` cluster; returns drift and every tool result.

    Approvals come from `answers` (the recording's, made from `events` when not given) unless
    `approver_factory` supplies another approver; a factory that wraps `answers` passes it too,
    so its drift is reported. A recorded decision answers only its own call and fingerprint:
    anything else is drift, and the replay stops at the next model turn. With `stop_on_drift`
    the replay also ends at the first request that differs from the recording (a person denied
    or edited a step); otherwise it plays on and reports that drift at the end. `serve` wraps
    the replay in the client the session talks to (agent/replay/served.py: the recorded turns
    read back over HTTP from a replay server).
    """
    answers = answers or RecordedApprover(events)
    client = ReplayClient(
        events, pace_s=pace_s, stop_on_drift=stop_on_drift, halted=answers.halt_reason
    )
    collect = _Collect()
    start = next((e for e in events if isinstance(e, SessionStart)), None)
    mode = start.mode if start and start.mode in MODES else "ask"
    async with sim_runtime(
        scenario,
        client=serve(client) if serve else client,
        approver_factory=approver_factory or (lambda rules: answers),
        model=start.model if start else "claude-replay",
        mode=mode,  # type: ignore[arg-type]
        goal=start.goal if start else None,
        listeners=[collect, *(listeners or [])],
        transcript_path=transcript_path,
        settings=recorded_history_settings(start),
    ) as runtime:
        for event in events:
            if isinstance(event, UserMessage):
                outcome = await runtime.session.send(event.text)
                if outcome.stop == "error":
                    break
        runtime.session.end("replayed")
    report = ReplayReport(
        client.played, client.recorded, client.drift, client.ran_out, answers.drift
    )
    return RedriveResult(report, runtime.transcript_path, collect.results)
