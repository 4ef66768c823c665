"""The three-Spark story: a recorded session where the plan uses two of three nodes, re-driven
against the spark-trio simulator with no drift."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.loop.transcript import read_transcript
from tests.support.proof_report import assert_ends_with_the_report, assert_engine_benchmark
from tests.support.scout_cli import ROOT, scout

pytestmark = pytest.mark.slow

TRANSCRIPT = ROOT / "transcripts" / "spark-trio-deploy.jsonl"


def test_the_recording_picks_two_of_three_nodes_and_rolls_out_only_there() -> None:
    events = read_transcript(TRANSCRIPT).events
    calls = [e for e in events if e.type == "tool_call"]
    results = {e.id: e for e in events if e.type == "tool_result"}
    assert {c.name for c in calls[:3]} == {"todo_write", "recon", "web_fetch"}
    plan_call = next(c for c in calls if c.name == "plan_deployment")
    assert plan_call.input["hosts"] == ["spark-a", "spark-b", "spark-c"]
    planned = results[plan_call.id]
    assert planned.data["layout"]["hosts"] == ["spark-a", "spark-b"]
    assert "(2 of 3 nodes:" in planned.data["plan"]["goal"]
    assert "spark-a (head) and spark-b share the fabric subnet 192.168.0.0/24" in planned.text
    steps = [c for c in calls if c.name == "rollout_step"]
    assert [c.input["step"] for c in steps] == list(range(1, len(planned.data["steps"]) + 1))
    assert all(not results[c.id].is_error for c in steps)
    assert {s["host"] for s in planned.data["steps"]} == {"spark-a", "spark-b"}
    assert [c.name for c in calls[-2:]] == ["endpoint_check", "todo_write"]
    check = next(r for r in results.values() if r.name == "endpoint_check")
    assert not check.is_error, check.text
    assert_engine_benchmark(check.data["report"])


def test_replay_on_the_trio_simulator_has_no_drift(tmp_path: Path) -> None:
    done = scout("replay", str(TRANSCRIPT), "--sim", "spark-trio", home=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "no drift: 11 model turns replayed as recorded" in done.stdout
    assert_ends_with_the_report(done.stdout)
