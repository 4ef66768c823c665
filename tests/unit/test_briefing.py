"""What the briefing tells the model once older turns are compacted and folded away."""

from __future__ import annotations

from agent.loop.briefing import render_briefing
from agent.loop.compaction import CallRecord
from tools.deploy.rollout.state import SessionState
from tools.plans.plan import Plan, PlanStep
from tools.todo import TodoList


def call(call_id: str, summary: str, *, outcome: str = "exit 0", seq: int = 1) -> CallRecord:
    return CallRecord(
        id=call_id,
        tool="ssh_exec",
        summary=summary,
        hosts=["spark-a", "spark-b"],
        seq=seq,
        outcome=outcome,
        folded=True,
    )


def log_of(briefing: str) -> list[str]:
    lines = briefing.splitlines()
    return lines[lines.index(next(line for line in lines if line.startswith("Earlier"))) + 1 :]


def test_folded_calls_name_the_id_recall_result_takes_and_repeats_share_one_line():
    folded = [
        call("toolu_1", "free -h", seq=10),
        call("toolu_2", "ibstat", seq=12),
        call("toolu_3", "free -h", seq=14),
        call("toolu_4", "ibstat", outcome="exit 1", seq=16),  # another outcome: its own line
        call("toolu_5", "free -h", seq=18),
    ]
    briefing = render_briefing(9, todo=TodoList(), state=SessionState(), world=None, folded=folded)
    assert log_of(briefing) == [
        "- ssh_exec on spark-a, spark-b `ibstat` → exit 0 (toolu_2)",
        "- ssh_exec on spark-a, spark-b `ibstat` → exit 1 (toolu_4)",
        "- ssh_exec on spark-a, spark-b `free -h` → exit 0 (3×, newest toolu_5)",
    ]


def test_the_approved_plan_shows_its_goal_up_to_the_first_sentence_and_every_step():
    state = SessionState()
    goal = (
        "serve Qwen/Qwen3.5-122B-A10B-FP8 with vllm-multinode, TP=2, on spark-a, spark-b. "
        "Ray: not in the image and spark-b cannot install it, so no Ray."
    )
    step = PlanStep(
        title="stop vllm_node",
        hosts=["spark-a"],
        actions=["docker stop vllm_node"],
        expected_downtime="whatever vllm_node serves",
        rollback="docker start vllm_node",
        success_check="vllm_node is gone from docker ps",
    )
    state.plan.approve(Plan(goal=goal, steps=[step]))
    lines = render_briefing(3, todo=TodoList(), state=state, world=None).splitlines()
    assert lines[1].startswith(
        f"Approved plan {state.plan.approved_hash}: serve Qwen/Qwen3.5-122B-A10B-FP8 with "
        "vllm-multinode, TP=2, on spark-a, spark-b. … (its propose_plan call holds the whole goal"
    )
    assert "Ray" not in lines[1]
    assert lines[2] == "  1. stop vllm_node on spark-a"
