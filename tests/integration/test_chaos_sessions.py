"""Whole sessions written by hypothesis, under every approval mode, on simulated clusters.

Each session checks, after it ends: nothing state-changing ran without an approval of exactly
that call (same fingerprint, asked and answered); every tool_use id got exactly one
tool_result; no traceback and no hang past the budget; every request the model was sent is one
the Messages API accepts; the transcript reads back whole, replays on the same starting state
with no drift, and resumes to the plans and rollouts the live session ended with; the hosts
hold no change that an approved state-changing call on them does not explain (none at all in
plan and ci modes). A session has a cluster to itself while it runs (agent/evaluation/chaos/
harness.py: one a lane, several lanes at once); hypothesis walks the fixed seed and shrinks a
broken session as usual (tests/support/chaos/drive.py). The stories below the property are the
shrunk counterexamples the chaos model found, each a bug fixed in Scout.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from agent.evaluation.chaos.harness import ChaosWorld
from agent.evaluation.chaos.moves import ONE_MB, PLAN, READS, RECON, Call, Story, Turn
from agent.loop.events import ModelResponse, Notice, ToolResultEvent, WorldUpdate
from agent.loop.transcript import read_transcript
from tests.support.chaos import drive

pytestmark = pytest.mark.slow

SESSIONS = int(os.environ.get("SCOUT_CHAOS_SESSIONS", "300"))
LANES = int(os.environ.get("SCOUT_CHAOS_LANES", "6"))
TODO = Call("todo_write", {"items": [{"content": "look", "status": "in_progress"}]})
READ = Call(*READS[0])
APPROVE = {"kind": "approved", "approve_steps": False}
WALK = [Turn((RECON,)), Turn((PLAN,)), Turn((Call("propose_plan", "plan:exact"),))]
STEP_1 = Call("rollout_step", {"step": 1, "check_attempts": 2, "check_interval_s": 0.2})


@pytest.fixture(scope="module")
def world() -> Iterator[ChaosWorld]:
    with ChaosWorld(lanes=LANES) as shared:
        yield shared


@pytest.mark.timeout(900)
def test_any_session_keeps_the_invariants(world: ChaosWorld) -> None:
    checked = drive.check(world, SESSIONS, 31)
    verdicts = list(checked.verdicts.values())
    # the drawn sessions reach what the invariants are about: approved plans, changes that ran
    assert any(v.plan_approved for v in verdicts)
    assert any(v.changes_ran for v in verdicts)


@pytest.mark.parametrize(
    "story",
    [
        # a paused turn's tool calls were never answered: every later request was refused
        Story("ask", [], [Turn((TODO, READ), stop_reason="pause_turn")]),
        # a repeated tool_use id: the history held both and the API refused every request after
        Story("ci", [], [Turn((READ, Call(TODO.name, TODO.input, reuse_id=True)))]),
        Story("plan", [], [Turn((TODO,)), Turn((Call(READ.name, READ.input, reuse_id=True),))]),
        # a 1 MB input stayed in the history: every later request was too long
        Story("auto-safe", [], [Turn((Call("world_note", {"x": ONE_MB}),)), Turn((TODO,))]),
        # a stream cut mid-tool_use was recorded but not replayed: the replay drifted
        Story("ci", [], [Turn((READ,), cut=True), Turn((TODO,))]),
        # the checker's own false alarm: in plan mode the approved plan's first step is refused,
        # and the rollout that opened for it holds nothing a resume must restore
        Story("plan", [APPROVE, APPROVE], [*WALK, Turn((STEP_1,)), Turn((), cut=True)]),
    ],
    ids=[
        "pause-turn-calls",
        "duplicate-id-in-turn",
        "duplicate-id-across-turns",
        "1mb",
        "cut",
        "refused-first-step",
    ],
)
def test_counterexamples_found_by_the_chaos_model(world: ChaosWorld, story: Story) -> None:
    assert world.run(story).broken == []


def test_a_turn_longer_than_a_transcript_line_reads_back(world: ChaosWorld) -> None:
    # four 1 MB inputs of control characters: about 24 MB as the writer escapes them
    huge = Call("world_note", {"x": "\x01" * len(ONE_MB)})
    verdict = world.run(Story("ask", [], [Turn((huge, huge, huge, huge))]))
    assert verdict.broken == []  # read back whole, replayed with no drift, resumed the same
    assert verdict.transcript is not None
    events = read_transcript(verdict.transcript).events
    assert [e.kind for e in events if isinstance(e, Notice)].count("reply_too_long") == 1
    reply = next(e for e in events if isinstance(e, ModelResponse))
    inputs = [b["input"] for b in reply.content if b.get("type") == "tool_use"]
    assert len(inputs) == 4 and all(set(i) == {"omitted"} for i in inputs)
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert len(results) == 4 and all(r.is_error for r in results)  # malformed: nothing ran
    assert not any(isinstance(e, WorldUpdate) for e in events)
