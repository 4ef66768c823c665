"""Chaos sessions on one simulated cluster that lives in its own event loop thread.

Hypothesis drives plain functions, so the cluster, its docs site and every session run on a
background loop; `ChaosWorld.run(story)` plays one story there and returns what broke. The
cluster is shared while sessions leave the hosts as they found them; after a session that
changed a host (approved, explained or not) it is replaced by a fresh one, so every session
starts from the scenario's state and a counterexample replays the same way.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.loop.events import Notice, UserMessage
from agent.loop.transcript import read_transcript
from agent.replay.client import ReplayClient
from agent.replay.recorded_approvals import RecordedApprover
from agent.replay.redrive import cluster_runtime
from agent.safety.approvers.scripted import ScriptedApprover
from sim.cluster import SimCluster
from sim.docs import DocsSite
from tests.support.chaos import invariants
from tests.support.chaos.model import ChaosClient
from tests.support.chaos.moves import Story

GOAL = "Serve Qwen/Qwen3.5-122B-A10B-FP8 across spark-a and spark-b."
AGAIN = "Go on."
BUDGET_S = 90.0


@dataclass
class Verdict:
    """What broke, and what the session reached (so a run shows its invariants were tested)."""

    broken: list[str] = field(default_factory=list)
    transcript: Path | None = None
    changes_ran: int = 0  # state-changing calls that ran (approved)
    hosts_changed: bool = False
    plan_approved: bool = False


class ChaosWorld:
    def __init__(self, scenario: str = "seed-pair", *, replay: bool = True) -> None:
        self.scenario = scenario
        self.replay = replay
        self.sessions = 0
        self._scratch = tempfile.TemporaryDirectory(prefix="scout-chaos-")
        self.root = Path(self._scratch.name)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._docs = DocsSite()
        self._sim: SimCluster | None = None

    def __enter__(self) -> ChaosWorld:
        self._docs.__enter__()
        self._thread.start()
        self._call(self._fresh_cluster())
        return self

    def __exit__(self, *exc: object) -> None:
        self._call(self._stop_cluster())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._docs.__exit__(None, None, None)
        self._scratch.cleanup()

    def run(self, story: Story) -> Verdict:
        return self._call(self._session(story))

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(BUDGET_S * 3)

    async def _fresh_cluster(self) -> None:
        await self._stop_cluster()
        self.sessions += 1
        self._sim = SimCluster(self.scenario, self.root / f"c{self.sessions}" / "sim")
        await self._sim.start()

    async def _stop_cluster(self) -> None:
        if self._sim is not None:
            await self._sim.stop()
            self._sim = None

    def _hosts(self) -> dict[str, str]:
        assert self._sim is not None
        names = list(self._sim.scenario.hosts)
        return invariants.host_snapshot({n: self._sim.host_state(n) for n in names})

    async def _session(self, story: Story) -> Verdict:
        self.sessions += 1
        root = self.root / f"s{self.sessions}"
        (root / "sim").mkdir(parents=True)
        path = root / "session.jsonl"
        verdict = Verdict(transcript=path)
        before = self._hosts()
        client = ChaosClient(story.turns)
        approver = ScriptedApprover(story.approvals, "chaos")
        live = None
        try:
            async with asyncio.timeout(BUDGET_S):
                async with cluster_runtime(
                    self._sim,  # type: ignore[arg-type]
                    self._docs.port,
                    root,
                    client=client,
                    approver_factory=lambda rules: approver,
                    model="claude-chaos",
                    mode=story.mode,  # type: ignore[arg-type]
                    goal=GOAL,
                    listeners=[client],
                    transcript_path=path,
                ) as runtime:
                    client.interrupt = runtime.session.interrupt
                    text = GOAL
                    for _ in range(len(story.turns) + 1):
                        await runtime.session.send(text)
                        text = AGAIN
                        if not client.turns:
                            break
                    runtime.session.end("chaos")
                    live = runtime.state
        except TimeoutError:
            verdict.broken.append(f"hang: the session ran past {BUDGET_S:.0f} s")
        except Exception:
            verdict.broken.append("traceback: " + traceback.format_exc(limit=-3))
        after = self._hosts()
        verdict.broken += client.broken
        loaded = read_transcript(path)
        verdict.broken += [f"transcript: {p}" for p in loaded.problems]
        events = loaded.events
        verdict.broken += invariants.one_result_each(events)
        verdict.broken += invariants.approved_exactly(events)
        verdict.broken += invariants.changes_explained(events, before, after, story.mode)
        if live is not None:
            verdict.broken += invariants.resumes_the_same(events, live)
        changed = before != after
        verdict.hosts_changed = changed
        verdict.changes_ran = invariants.changes_that_ran(events)
        verdict.plan_approved = live is not None and live.plan.approved_hash is not None
        if changed:
            await self._fresh_cluster()
        if self.replay and live is not None and not _interrupted(events):
            verdict.broken += await self._replays(events, story, root)
            if changed:
                await self._fresh_cluster()
        return verdict

    async def _replays(self, events: list, story: Story, root: Path) -> list[str]:
        """The transcript, re-driven on the same starting state, asks what it asked then."""
        answers = RecordedApprover(events)
        client = ReplayClient(events, halted=answers.halt_reason)
        (root / "replay" / "sim").mkdir(parents=True)
        async with asyncio.timeout(BUDGET_S):
            async with cluster_runtime(
                self._sim,  # type: ignore[arg-type]
                self._docs.port,
                root / "replay",
                client=client,
                approver_factory=lambda rules: answers,
                model="claude-chaos",
                mode=story.mode,  # type: ignore[arg-type]
                goal=GOAL,
                transcript_path=root / "replay" / "session.jsonl",
            ) as runtime:
                for event in events:
                    if isinstance(event, UserMessage):
                        await runtime.session.send(event.text)
        if client.drift or answers.drift or client.played != client.recorded:
            first = client.drift[0].diff if client.drift else "; ".join(answers.drift)
            return [f"replay drift ({client.played}/{client.recorded} turns): {first[:600]}"]
        return []


def _interrupted(events: list) -> bool:
    """An operator's interrupt lands at a moment no replay can reproduce exactly."""
    return any(isinstance(e, Notice) and e.kind == "cancelled" for e in events)
