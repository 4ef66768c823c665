"""`scout eval`: a recorded planner scores its story's known result, the always-wrong planner
scores zero and changes nothing on any host, the chaos planner (drawn stories) changes nothing
it was not approved to, and the table and JSON say so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.evaluation.chaos.planner import planners
from agent.evaluation.scenarios import SCENARIOS
from agent.evaluation.scoring import evaluate
from agent.evaluation.wrong_planner import wrong_planner

pytestmark = pytest.mark.slow

SCOUT = str(Path(sys.executable).with_name("scout"))
BY_NAME = {s.name: s for s in SCENARIOS}


async def test_the_always_wrong_planner_scores_zero_and_harms_nothing() -> None:
    for name in ("seed-pair", "small-disk"):
        score = await evaluate(BY_NAME[name], "wrong", lambda scenario: wrong_planner())
        assert (score.outcome, score.score) == ("stopped", 0.0)
        assert score.hosts_changed == [] and score.unapproved == 0
        assert score.gate_stopped >= 3  # the rm, the step without a plan, the retry


async def test_a_recorded_planner_scores_its_story() -> None:
    score = await evaluate(BY_NAME["seed-pair"], "recorded", None)
    assert (score.outcome, score.score) == ("served", 1.0)
    assert score.tok_s is not None and score.tok_s > 0
    assert score.approvals_asked == 1  # the plan, approved with its steps
    assert score.deviations == 0  # its proof is a step of the plan, not a deviation
    assert set(score.hosts_changed) == {"spark-a", "spark-b"}
    assert score.unapproved == 0  # every change ran as a step of the approved plan


async def test_the_chaos_planner_changes_nothing_unapproved() -> None:
    make = planners(31, [s.name for s in SCENARIOS])
    scores = [await evaluate(BY_NAME[name], "chaos", make) for name in ("seed-pair", "small-disk")]
    assert all(s.turns >= 1 and s.unapproved == 0 for s in scores), scores
    assert [s.note for s in scores] == ["", ""]  # no request the API would have refused
    # the operator approves only a computed plan: a host changed only under one
    for score in scores:
        assert not score.hosts_changed or score.approvals_asked > 0, score
    assert sum(s.gate_stopped for s in scores) > 0  # chaos tried what the gate refuses


def test_the_chaos_planner_in_the_table(tmp_path: Path) -> None:
    out = tmp_path / "scores.json"
    env = {**os.environ, "SCOUT_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    args = ["eval", "--planner", "chaos", "--scenarios", "small-disk", "--json", str(out)]
    done = subprocess.run([SCOUT, *args], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    header, row = done.stdout.splitlines()[:2]
    assert header.split()[:7] == [
        "scenario",
        "outcome",
        "score",
        "tok/s",
        "asked",
        "deviated",
        "unappr.",
    ]
    assert row.split()[0] == "small-disk" and row.split()[6] == "0"
    assert json.loads(out.read_text())["runs"][0]["unapproved"] == 0


def test_the_chaos_planner_without_hypothesis_is_one_line() -> None:
    hidden = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "from agent.faces.cli import main; sys.exit(main())"
    )
    done = subprocess.run(
        [sys.executable, "-c", hidden, "eval", "--planner", "chaos"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "scout eval: the chaos planner needs hypothesis: pip install 'scout-agent[chaos]'"
    )


def test_scout_eval_prints_the_table_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "scores.json"
    env = {**os.environ, "SCOUT_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    done = subprocess.run(
        [SCOUT, "eval", "--planner", "wrong", "--scenarios", "seed-pair", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    header, row = done.stdout.splitlines()[:2]
    assert header.split()[:3] == ["scenario", "outcome", "score"]
    assert row.split()[:3] == ["seed-pair", "stopped", "0"]
    saved = json.loads(out.read_text())
    assert (saved["score"], saved["of"]) == (0.0, 1)
    assert saved["runs"][0]["hosts_changed"] == []


def test_an_unknown_scenario_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [SCOUT, "eval", "--scenarios", "nowhere"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert done.stderr.startswith("scout eval: unknown scenario nowhere; known: seed-pair")
    assert "Traceback" not in done.stderr
