"""A plan approved with its steps holds on resume in every approvals mode, `ci` included.

The README promises that a resumed session keeps exactly the steps not yet used. In `ci` no
person can be asked, but none needs to be: the operator approved the step ahead of time, with
the plan. The first session (in process, an operator approving the plan with its steps) runs
step 1; `scout run --resume --approvals ci` (its own process, the real SDK against the replay
server) then runs step 2 on that approval, and still refuses what the plan did not cover.
Resumed against another inventory, where a host name reaches another machine, it refuses: the
plan's approvals were given for the machines the session ran on.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from agent.standin.server import MessagesAPIServer
from sim.cluster import SimCluster
from tests.integration.test_plan_grant_after_crash import (
    FREE_FORM,
    REMOVE,
    STOP,
    WITH_STEPS,
    deploy,
)
from tests.support.scout_cli import scout
from tests.support.session_kit import text_turn
from tests.support.story_script import tool_use_turn
from tools.ssh import Inventory

pytestmark = pytest.mark.slow

UNPLANNED = {"host": "spark-a", "command": "docker rm other_node"}


async def test_ci_resume_runs_the_steps_the_plan_approved_and_only_those(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = tmp_path / "first.jsonl"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-used")
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
        script = [
            tool_use_turn([("two", "ssh_exec", REMOVE)]),
            tool_use_turn([("other", "ssh_exec", UNPLANNED)]),
            text_turn("done"),
        ]
        inventory = tmp_path / "inventory.yaml"
        other = tmp_path / "other.yaml"
        data = yaml.safe_load(inventory.read_text())
        data["hosts"]["spark-a"]["port"] += 1  # the same name, another machine
        other.write_text(yaml.safe_dump(data))
        moved = await asyncio.to_thread(
            scout, "run", "--resume", str(first), "--inventory", str(other), home=tmp_path / "h"
        )
        assert moved.returncode == 1 and moved.stdout == ""
        assert scout_lines(moved.stderr) == [
            f"scout run: cannot resume {first}: the session ran on other hosts: spark-a was "
            f"{_where(inventory)}, the inventory says {_where(other)}. Resume with the inventory "
            "it ran on, or start a new session with --goal"
        ]
        with MessagesAPIServer(script) as api:
            done = await asyncio.to_thread(
                scout,
                *("run", "--resume", str(first), "--approvals", "ci", "--base-url", api.url),
                *("--inventory", str(inventory)),
                home=tmp_path / "home",
            )
    events = [json.loads(line) for line in done.stdout.splitlines()]
    decided = {e["call_id"]: e for e in events if e["type"] == "approval_decision"}
    results = {e["id"]: e for e in events if e["type"] == "tool_result"}
    assert decided["two"]["decided_by"] == "plan approval", done.stderr
    assert not results["two"]["is_error"], results["two"]["text"]
    assert results["other"]["is_error"] and "ci mode" in results["other"]["text"]
    assert "other" not in decided  # refused by ci itself: nothing was asked, nothing granted
    assert done.returncode == 0, done.stderr


def scout_lines(stderr: str) -> list[str]:
    """Scout's own lines (a library's import warnings are not Scout's to assert on)."""
    return [line for line in stderr.splitlines() if line.startswith(("scout", "warning: "))]


def _where(inventory: Path) -> str:
    return Inventory.load(inventory).where()["spark-a"]
