"""Recording a session on the simulated cluster and re-driving it against a fresh one."""

import pytest

from agent.loop.transcript import read_transcript
from agent.replay.redrive import redrive, sim_runtime
from agent.safety.approvers.scripted import ScriptedApprover
from agent.standin.server import MessagesAPIServer
from tests.support.plans import one_step_plan
from tests.support.session_kit import sdk_client, text_turn, tool_turn

pytestmark = pytest.mark.slow

PLAN = one_step_plan(
    "bring the worker's RoCE link up",
    title="bring the fabric interface up",
    host="spark-b",
    actions=["sudo ip link set enp1s0f1np1 up"],
    rollback="sudo ip link set enp1s0f1np1 down",
    success_check="ibdev2netdev shows rocep1s0f1 (Up)",
).model_dump()
SCRIPT = [
    tool_turn(
        [
            ("toolu_1", "recon", {"hosts": "all"}),
            ("toolu_2", "web_fetch", {"url": "http://docs.spark.sim/vllm-two-sparks.html"}),
        ]
    ),
    tool_turn([("toolu_3", "propose_plan", PLAN)]),
    tool_turn(
        [("toolu_4", "ssh_exec", {"host": "spark-b", "command": "sudo ip link set enp1s0f1np1 up"})]
    ),
    tool_turn([("toolu_5", "ssh_exec", {"host": "spark-b", "command": "ibdev2netdev"})]),
    text_turn("The worker's RoCE link is up."),
]


async def _record(tmp_path):
    path = tmp_path / "recorded" / "session.jsonl"
    approver = ScriptedApprover([("approved", "go"), ("approved", "")], name="operator")
    with MessagesAPIServer(SCRIPT) as api:
        async with sim_runtime(
            "seed-pair",
            client=sdk_client(api.url),
            approver_factory=lambda rules: approver,
            transcript_path=path,
            goal="fix the worker's link",
        ) as runtime:
            await runtime.session.send("fix the worker's link")
            runtime.session.end("done")
    return path


async def test_a_recorded_sim_session_redrives_without_drift(tmp_path):
    recorded = read_transcript(await _record(tmp_path)).events
    results = {e.id: e for e in recorded if e.type == "tool_result"}
    assert "RoCE" in results["toolu_1"].text or "rocep1s0f1" in results["toolu_1"].text
    assert "untrusted web content" in results["toolu_2"].text
    assert "tensor-parallel-size 2" in results["toolu_2"].text
    assert "rocep1s0f1 port 1 ==> enp1s0f1np1 (Up)" in results["toolu_5"].text

    outcome = await redrive(recorded, "seed-pair", transcript_path=tmp_path / "again.jsonl")
    assert outcome.report.clean, outcome.report.describe()
    assert outcome.report.turns_played == 5
    again = {e.id: e for e in outcome.results}
    assert "(Up)" in again["toolu_5"].text


async def test_redrive_against_a_broken_cluster_reports_drift(tmp_path):
    recorded = read_transcript(await _record(tmp_path)).events
    outcome = await redrive(recorded, "worker-down")
    assert not outcome.report.clean
    assert "tool_result toolu_" in outcome.report.describe()


def _forged(events, target, **changes):
    """The recording with the decision for call `target` edited."""
    return [
        e.model_copy(update=changes) if e.type == "approval_decision" and e.call_id == target else e
        for e in events
    ]


async def test_a_decision_with_a_forged_fingerprint_is_drift_and_nothing_runs(tmp_path):
    recorded = read_transcript(await _record(tmp_path)).events
    forged = _forged(recorded, "toolu_4", fingerprint="sha256:0")
    outcome = await redrive(forged, "seed-pair")
    results = {e.id: e for e in outcome.results}
    assert not outcome.report.clean
    assert "drift: approval for call toolu_4 (ssh_exec, sha256:" in outcome.report.describe()
    assert results["toolu_4"].is_error
    assert "the recording holds no decision for this call" in results["toolu_4"].text
    assert "toolu_5" not in results  # the replay stopped at the drift
    assert outcome.report.turns_played == 3


async def test_a_decision_recorded_for_another_call_does_not_answer_this_one(tmp_path):
    recorded = read_transcript(await _record(tmp_path)).events
    moved = _forged(recorded, "toolu_4", call_id="toolu_99")
    outcome = await redrive(moved, "seed-pair")
    results = {e.id: e for e in outcome.results}
    assert outcome.report.approval_drift and results["toolu_4"].is_error
    assert "toolu_5" not in results
