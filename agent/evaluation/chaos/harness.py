"""Chaos sessions on simulated clusters that live in their own event loop thread.

Hypothesis drives plain functions, so the clusters, their docs site and every session run on a
background loop; `ChaosWorld.run(story)` plays one story there and returns what broke, and
`run_many(stories)` plays many at once, one a lane. A lane is one cluster that only one session
uses at a time, so the hosts' state before and after a session is that session's alone: most of
a session's time is spent waiting on the simulated hosts (`docker stats` samples for a second
or two, as the daemon does), and lanes overlap those waits. A lane's cluster is shared by its
sessions in turn while they leave the hosts as they found them; after a session that changed a
host (approved, explained or not) it is replaced by a fresh one, so every session starts from
the scenario's state and a counterexample replays the same way.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.evaluation.chaos import invariants
from agent.evaluation.chaos.moves import Story
from agent.evaluation.chaos.planner import ChaosClient
from agent.loop.events import Notice, UserMessage
from agent.loop.transcript import read_transcript
from agent.replay.client import ReplayClient
from agent.replay.recorded_approvals import RecordedApprover
from agent.replay.redrive import cluster_runtime
from agent.safety.approvers.scripted import ScriptedApprover
from sim.cluster import SimCluster
from sim.docs import DocsSite

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


class Lane:
    """One simulated cluster, used by one session at a time."""

    def __init__(self, scenario: str, root: Path) -> None:
        self.scenario = scenario
        self.root = root
        self.clusters = 0
        self.sim: SimCluster | None = None

    async def fresh(self) -> SimCluster:
        await self.stop()
        self.clusters += 1
        self.sim = SimCluster(self.scenario, self.root / f"c{self.clusters}" / "sim")
        await self.sim.start()
        return self.sim

    async def stop(self) -> None:
        if self.sim is not None:
            await self.sim.stop()
            self.sim = None

    def hosts(self) -> dict[str, str]:
        assert self.sim is not None
        names = list(self.sim.scenario.hosts)
        return invariants.host_snapshot({n: self.sim.host_state(n) for n in names})


class ChaosWorld:
    def __init__(self, scenario: str = "seed-pair", *, replay: bool = True, lanes: int = 1) -> None:
        self.replay = replay
        self.sessions = 0
        self._scratch = tempfile.TemporaryDirectory(prefix="scout-chaos-")
        self.root = Path(self._scratch.name)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._docs = DocsSite()
        self._lanes = [Lane(scenario, self.root / f"lane{n}") for n in range(max(1, lanes))]

    def __enter__(self) -> ChaosWorld:
        self._docs.__enter__()
        self._thread.start()
        for lane in self._lanes:
            self._call(lane.fresh())
        return self

    def __exit__(self, *exc: object) -> None:
        for lane in self._lanes:
            self._call(lane.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._docs.__exit__(None, None, None)
        self._scratch.cleanup()

    def run(self, story: Story) -> Verdict:
        return self._call(self._session(self._lanes[0], story))

    def run_many(self, stories: list[Story]) -> list[Verdict]:
        """Each story's verdict, in order; as many play at once as there are lanes."""
        return self._call(self._many(stories), timeout=BUDGET_S * 3 * max(1, len(stories)))

    async def _many(self, stories: list[Story]) -> list[Verdict]:
        verdicts: list[Verdict | None] = [None] * len(stories)
        todo = iter(enumerate(stories))

        async def work(lane: Lane) -> None:
            for index, story in todo:
                try:
                    verdicts[index] = await self._session(lane, story)
                except Exception:  # the harness's own failure: still that story's verdict
                    verdicts[index] = Verdict(["traceback: " + traceback.format_exc(limit=-3)])
                    await lane.fresh()

        await asyncio.gather(*(work(lane) for lane in self._lanes))
        return [v if v is not None else Verdict(["never played"]) for v in verdicts]

    def _call(self, coro: Any, timeout: float = BUDGET_S * 3) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    async def _session(self, lane: Lane, story: Story) -> Verdict:
        self.sessions += 1
        root = self.root / f"s{self.sessions}"
        (root / "sim").mkdir(parents=True)
        path = root / "session.jsonl"
        verdict = Verdict(transcript=path)
        before = lane.hosts()
        client = ChaosClient(story.turns)
        approver = ScriptedApprover(story.approvals, "chaos")
        live = None
        try:
            async with asyncio.timeout(BUDGET_S):
                async with cluster_runtime(
                    lane.sim,  # type: ignore[arg-type]
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
        after = lane.hosts()
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
            await lane.fresh()
        if self.replay and live is not None and not _interrupted(events):
            verdict.broken += await self._replays(lane, events, story, root)
            if changed:
                await lane.fresh()
        return verdict

    async def _replays(self, lane: Lane, events: list, story: Story, root: Path) -> list[str]:
        """The transcript, re-driven on the same starting state, asks what it asked then."""
        answers = RecordedApprover(events)
        client = ReplayClient(events, halted=answers.halt_reason)
        (root / "replay" / "sim").mkdir(parents=True)
        async with asyncio.timeout(BUDGET_S):
            async with cluster_runtime(
                lane.sim,  # type: ignore[arg-type]
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
