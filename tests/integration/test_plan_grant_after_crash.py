"""A crash in the middle of a step the plan's approval covered: resumed, that approval is used.

Live, a step call that used its approval and never finished withdraws what is left of the
grant (tools/plans/approval.py): its effect is unknown, so nothing more runs unasked. A session
resumed from the transcript such a crash leaves (the step's call and its decision, no result)
must hold the same: the step asks before it runs again, and so do the steps after it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.loop.events import Event
from agent.loop.resumed import RebuiltSession
from agent.loop.transcript import read_transcript
from agent.runtime.builder import open_runtime
from agent.runtime.resume import rebuild
from agent.runtime.settings import Settings
from agent.safety.approvers.scripted import ScriptedApprover
from agent.standin.server import MessagesAPIServer
from sim.cluster import SimCluster
from tests.support.session_kit import sdk_client, text_turn
from tests.support.story_script import call_id, story_script, tool_use_turn, turn_index
from tools.plans.plan import Plan, PlanStep

STORY = "seed-pair-deploy"
WITH_STEPS = {"kind": "approved", "message": "", "approve_steps": True}
PATIENT = {"check_attempts": 20, "check_interval_s": 0.3}


async def deploy(
    sim: SimCluster,
    tmp_path: Path,
    turns: list[dict[str, Any]],
    *,
    transcript: Path,
    answers: list,
    resume: RebuiltSession | None = None,
) -> ScriptedApprover:
    """One session of `turns` on the running `sim`; the approver says what it was asked."""
    settings = Settings(
        inventory=sim.write_inventory(tmp_path / "inventory.yaml"),
        transcripts_dir=tmp_path,
        log_file=tmp_path / "scout.log",
    )
    approver = ScriptedApprover(answers, name="operator")
    with MessagesAPIServer([*turns, text_turn("stop")]) as api:
        runtime = await open_runtime(
            settings,
            client=sdk_client(api.url),
            approver_factory=lambda rules: approver,
            transcript_path=transcript,
            resume=resume,
        )
        try:
            await runtime.session.send("deploy")
        finally:
            await runtime.aclose()
    return approver


def cut_mid_call(events: list[Event], call: str) -> list[Event]:
    """The transcript as a crash during `call` leaves it: up to its approval decision."""
    decided = next(
        n for n, e in enumerate(events) if e.type == "approval_decision" and e.call_id == call
    )
    return events[: decided + 1]


@pytest.mark.slow
async def test_a_step_left_unfinished_by_a_crash_asks_before_it_runs_again(tmp_path):
    story = story_script(STORY)
    crashed_in = call_id(story, "rollout_step", step=2)
    first = tmp_path / "first.jsonl"
    async with SimCluster("seed-pair", tmp_path / "sim") as sim:
        before = await deploy(
            sim,
            tmp_path,
            story[: turn_index(story, "rollout_step", step=2) + 1],
            transcript=first,
            answers=[WITH_STEPS],
        )
        assert [r.tool for r in before.seen] == ["propose_plan"]  # step 2 ran on the grant
        events = cut_mid_call(read_transcript(first).events, crashed_in)
        assert events[-1].decided_by == "plan approval"
        after = await deploy(
            sim,
            tmp_path,
            [
                tool_use_turn([("again", "rollout_step", {"step": 2, **PATIENT})]),
                tool_use_turn([("next", "rollout_step", {"step": 3, **PATIENT})]),
            ],
            transcript=tmp_path / "resumed.jsonl",
            answers=[("approved", ""), ("approved", "")],
            resume=rebuild(events),
        )
    assert [(r.tool, r.call_id) for r in after.seen] == [
        ("rollout_step", "again"),
        ("rollout_step", "next"),
    ]


FREE_FORM = Plan(
    goal="free spark-a's memory for the new engine",
    steps=[
        PlanStep(
            title="stop the old server",
            hosts=["spark-a"],
            actions=["docker stop vllm_node"],
            expected_downtime="the old endpoint stops",
            rollback="docker start vllm_node",
            success_check="docker ps shows no vllm_node",
        ),
        PlanStep(
            title="remove it",
            hosts=["spark-a"],
            actions=["docker rm vllm_node"],
            expected_downtime="none more",
            rollback="none: the container is gone",
            success_check="docker ps -a shows no vllm_node",
        ),
    ],
).model_dump()
STOP = {"host": "spark-a", "command": "docker stop vllm_node"}
REMOVE = {"host": "spark-a", "command": "docker rm vllm_node"}


async def test_a_resumed_free_form_plan_keeps_the_step_approvals_it_used(tmp_path):
    """A plan the model wrote, approved with its steps; step 1 ran by ssh_exec on it, then the
    session stopped without an end. Resumed: step 2 runs unasked, step 1 again asks."""
    first = tmp_path / "first.jsonl"
    async with SimCluster("seed-pair", tmp_path / "sim") as sim:
        before = await deploy(
            sim,
            tmp_path,
            [
                tool_use_turn([("p", "propose_plan", FREE_FORM)]),
                tool_use_turn([("one", "ssh_exec", STOP)]),
            ],
            transcript=first,
            answers=[WITH_STEPS],
        )
        assert [r.tool for r in before.seen] == ["propose_plan"]
        events = [e for e in read_transcript(first).events if e.type != "session_end"]
        after = await deploy(
            sim,
            tmp_path,
            [
                tool_use_turn([("again", "ssh_exec", STOP)]),
                tool_use_turn([("two", "ssh_exec", REMOVE)]),
            ],
            transcript=tmp_path / "resumed.jsonl",
            answers=[("approved", "")],
            resume=rebuild(events),
        )
    assert [(r.tool, r.call_id) for r in after.seen] == [("ssh_exec", "again")]
