"""Whole sessions written by hypothesis, under every approval mode, on one simulated cluster.

After each: nothing state-changing ran without an approval of exactly that call, every tool_use
id got exactly one tool_result, no traceback and no hang, the transcript replays without drift
and resumes to the same state, and the hosts hold no change the transcript does not explain
(tests/support/chaos/). The stories below the property are the shrunk counterexamples the chaos
model found, each a bug fixed in Scout.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

from tests.support.chaos.harness import ChaosWorld
from tests.support.chaos.moves import ONE_MB, PLAN, READS, RECON, Call, Story, Turn, stories

SESSIONS = int(os.environ.get("SCOUT_CHAOS_SESSIONS", "120"))
TODO = Call("todo_write", {"items": [{"content": "look", "status": "in_progress"}]})
READ = Call(*READS[0])
APPROVE = {"kind": "approved", "approve_steps": False}
WALK = [Turn((RECON,)), Turn((PLAN,)), Turn((Call("propose_plan", "plan:exact"),))]
STEP_1 = Call("rollout_step", {"step": 1, "check_attempts": 2, "check_interval_s": 0.2})


@pytest.fixture(scope="module")
def world() -> Iterator[ChaosWorld]:
    with ChaosWorld() as shared:
        yield shared


@pytest.mark.timeout(900)
def test_any_session_keeps_the_invariants(world: ChaosWorld) -> None:
    @settings(
        max_examples=SESSIONS,
        deadline=None,
        database=None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @seed(31)
    @given(stories())
    def session(story: Story) -> None:
        verdict = world.run(story)
        assert verdict.broken == [], verdict.broken

    session()


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
