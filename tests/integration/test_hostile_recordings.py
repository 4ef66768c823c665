"""Hostile recordings: an edited transcript cannot approve what it did not record for exactly
that call, and an oversized one replays quickly in bounded memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.loop.events import ApprovalDecisionEvent, ToolCallEvent
from agent.loop.transcript import read_transcript
from agent.replay.redrive import redrive
from tests.support.hostile import Heartbeat, run_measured

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPT = ROOT / "transcripts" / "seed-pair-deploy.jsonl"
SCOUT = str(Path(sys.executable).with_name("scout"))
FORGED_CALL = "toolu_06"  # recorded as propose_plan, by its hash, approved with its steps


def forged_events() -> list:
    """The demo recording, edited as an attacker would: the plan's decision (which approved
    every step with the plan) carries a made-up fingerprint."""
    events = []
    for event in read_transcript(TRANSCRIPT).events:
        if isinstance(event, ApprovalDecisionEvent) and event.call_id == "plan":
            event = event.model_copy(update={"fingerprint": "plan:0"})
        events.append(event)
    return events


def write_events(path: Path, events: list) -> Path:
    path.write_text("".join(event.model_dump_json() + "\n" for event in events))
    return path


def scout(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SCOUT_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "160"}
    return subprocess.run(
        [SCOUT, *args], capture_output=True, text=True, timeout=240, env=env, cwd=ROOT
    )


async def test_a_forged_decision_is_drift_and_nothing_runs_on_it(tmp_path: Path) -> None:
    async with Heartbeat() as beat:
        outcome = await redrive(forged_events(), "seed-pair", transcript_path=tmp_path / "r.jsonl")
    beat.assert_kept_ticking()
    rerun = read_transcript(outcome.transcript_path).events
    risky = {e.id for e in rerun if isinstance(e, ToolCallEvent) and e.risk != "read_only"}
    results = {e.id: e for e in outcome.results}

    assert not outcome.report.clean
    assert outcome.report.approval_drift[0].startswith(
        "approval for call plan (propose_plan, plan:"
    )
    assert results[FORGED_CALL].is_error
    assert "the recording holds no decision for this call" in results[FORGED_CALL].text
    ran = [call for call in risky if call in results and not results[call].is_error]
    assert ran == []  # no mutating or destructive call ran after the drift
    assert outcome.endpoint_check() is None


def test_scout_replay_and_the_demo_refuse_a_forged_recording(tmp_path: Path) -> None:
    forged = write_events(tmp_path / "forged.jsonl", forged_events())
    replayed = scout("replay", str(forged), "--sim", "seed-pair", home=tmp_path / "a")
    demo = scout(
        "demo", "--fast", "--transcript", str(forged), "--sim", "seed-pair", home=tmp_path / "b"
    )
    for done in (replayed, demo):
        assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
        assert "drift: approval for call plan (propose_plan, plan:" in done.stdout
        assert "Traceback" not in done.stderr
    assert "no endpoint was verified in this run" in demo.stdout


def test_replaying_a_60_mb_line_stays_bounded_and_says_what_it_skipped(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("w") as handle:
        handle.write(json.dumps({"type": "session_start", "model": "m", "session": "s"}) + "\n")
        handle.write(json.dumps({"type": "user_message", "text": "A" * 60_000_000}) + "\n")
        blocks = [{"type": "text", "text": "block"}] * 100_000  # 3.5 MB: under the cap
        response = {"type": "model_response", "turn": 1, "stop_reason": "end_turn"}
        handle.write(json.dumps({**response, "content": blocks}) + "\n")
        handle.write(json.dumps({"type": "user_message", "text": "still here"}) + "\n")
    outcome = run_measured(
        "import contextlib, io, json, os\n"
        f"os.environ['SCOUT_HOME'] = {str(tmp_path / 'home')!r}\n"
        "from agent.faces.cli import main\n"
        "out, err = io.StringIO(), io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
        f"    code = main(['replay', {str(path)!r}])\n"
        "print(json.dumps({'code': code, 'out': out.getvalue(), 'err': err.getvalue()}))"
    )
    assert outcome["code"] == 0, outcome["err"][-2000:]
    assert (
        "line 2: 57.2 MB, longer than the 4 MB a transcript line may hold; skipped"
        in outcome["err"]
    )
    assert "… 99960 more text blocks not shown" in outcome["out"]
    assert "you › still here" in outcome["out"]
    assert outcome["peak_rss_mb"] < 250  # the 60 MB line was never held
