"""A `scout run` killed between two steps of a plan approved with its steps, then resumed.

A real `scout run` process deploys the fresh pair from the story's own recorded turns (the real
SDK against the replay server, approvals from the example signed webhook, which approves the
plan with its steps). The replay server holds the request that carries step 9's result, so the
process is killed (SIGKILL) after step 9 finished and before step 10 started. `scout run
--resume` then goes on: step 10 runs on the approval the plan gave (the webhook is not asked
again), step 9 does not run again (its container on spark-b is the one it started), and the
session ends with the endpoint served and proven.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from agent.standin.server import MessagesAPIServer
from sim.cluster import SimCluster
from tests.support.counting_decider import CountingDecider
from tests.support.example_receiver import receiver, serving
from tests.support.story_script import call_id, story_script, turn_index

pytestmark = pytest.mark.slow

REPO = Path(__file__).parents[2]
SECRET = "webhook-secret-for-the-plan-resume-test-0123"
RULES = "approve:\n  - {tool: propose_plan, approve_steps: true}\n"
GOAL = "Serve Qwen/Qwen3.5-122B-A10B-FP8 with TP=2 across spark-a and spark-b, and prove it."
KILLED_AFTER = 9  # spark-b's engine container started; step 10 starts vLLM rank 1 in it


class HoldingAPI(MessagesAPIServer):
    """The replay server, holding the request that carries one call's result until released."""

    def __init__(self, script: list[dict[str, Any]], hold_for: str) -> None:
        super().__init__(script)
        self.hold_for = hold_for
        self.held = threading.Event()
        self.release = threading.Event()

    def _take(self, method: str, path: str, headers: dict[str, str], body: Any):
        if path == "/v1/messages" and self.hold_for in _result_ids(body):
            self.held.set()
            self.release.wait(120)
        return super()._take(method, path, headers, body)

    def close(self) -> None:
        self.release.set()
        super().close()


def _result_ids(body: Any) -> set[str]:
    if not isinstance(body, dict) or not body.get("messages"):
        return set()
    last = body["messages"][-1].get("content")
    blocks = last if isinstance(last, list) else []
    return {b.get("tool_use_id", "") for b in blocks if b.get("type") == "tool_result"}


def scout_env(tmp_path: Path, api_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCOUT_", "ANTHROPIC_"))}
    env.update(
        ANTHROPIC_API_KEY="test",
        ANTHROPIC_BASE_URL=api_url,
        SCOUT_HOME=str(tmp_path / "home"),
        SCOUT_TEST_HOOK_SECRET=SECRET,
    )
    return env


async def scout_run(*args: str, env: dict[str, str], logs: Path) -> asyncio.subprocess.Process:
    """`scout run` as its own process; its stdout and stderr go to files in `logs` (a pipe
    nobody reads while it runs would fill and stop it)."""
    logs.mkdir(parents=True)
    with (logs / "out").open("wb") as out, (logs / "err").open("wb") as err:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agent.faces.cli", "run", *args,
            cwd=REPO, env=env, stdout=out, stderr=err,
        )  # fmt: skip


async def stopped(process: asyncio.subprocess.Process) -> None:
    """A process this test started, ended if a hang guard gave up on it."""
    if process.returncode is None:
        process.kill()
        await process.wait()


def events_of(logs: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (logs / "out").read_text().splitlines()]


def errors_of(logs: Path) -> str:
    return (logs / "err").read_text()[-3000:]


def engine_container(sim: SimCluster) -> dict[str, Any]:
    containers = sim.host_state("spark-b")["docker"]["containers"]
    return containers["scout-vllm"]


@pytest.mark.timeout(360)
@pytest.mark.parametrize("cluster", ["fresh-pair"], indirect=True)
async def test_a_killed_run_resumes_between_two_approved_steps(cluster, tmp_path):
    inventory = str(cluster.write_inventory(tmp_path / "inv" / "inventory.yaml"))
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    decider = CountingDecider(rules)
    hook = receiver.make_server("127.0.0.1", 0, SECRET.encode(), decider, log=io.StringIO())
    story = story_script()
    split = turn_index(story, "rollout_step", step=KILLED_AFTER) + 1
    held = call_id(story, "rollout_step", step=KILLED_AFTER)
    hook_args = ["--approvals", "webhook", "--webhook-secret-env", "SCOUT_TEST_HOOK_SECRET"]

    with serving(hook) as hook_url:
        with HoldingAPI(story[: split + 1], hold_for=held) as api:
            scout = await scout_run(
                "--goal", GOAL, "--inventory", inventory, *hook_args, "--webhook-url", hook_url,
                env=scout_env(tmp_path, api.url), logs=tmp_path / "first",
            )  # fmt: skip
            try:
                async with asyncio.timeout(240):  # a hang guard only
                    while not api.held.is_set() and scout.returncode is None:
                        await asyncio.sleep(0.05)
                if not api.held.is_set():
                    said = errors_of(tmp_path / "first")
                    raise AssertionError(f"scout run ended before step 10: {said}")
                before = engine_container(cluster)
                os.kill(scout.pid, signal.SIGKILL)
                assert await scout.wait() == -signal.SIGKILL
            finally:
                await stopped(scout)
        asked_before = [r["tool"] for r in decider.asked]
        transcript = next((tmp_path / "home" / "transcripts").glob("*.jsonl"))

        with MessagesAPIServer(story[split:]) as api:
            resumed = await scout_run(
                "--resume", str(transcript), "--inventory", inventory, *hook_args,
                "--webhook-url", hook_url, env=scout_env(tmp_path, api.url),
                logs=tmp_path / "resumed",
            )  # fmt: skip
            try:
                await asyncio.wait_for(resumed.wait(), 240)
            finally:
                await stopped(resumed)
            assert api.remaining() == 0, errors_of(tmp_path / "resumed")

    first = events_of(tmp_path / "first")
    done = [e["id"] for e in first if e["type"] == "tool_result" and e["name"] == "rollout_step"]
    assert len(done) == KILLED_AFTER  # steps 1 to 9 ran before the kill, step 10 did not
    assert asked_before == ["propose_plan"]

    assert resumed.returncode == 0, errors_of(tmp_path / "resumed")
    events = events_of(tmp_path / "resumed")
    assert [r["tool"] for r in decider.asked] == ["propose_plan"]  # nothing new asked
    assert [e["kind"] for e in events if e["type"] == "notice"][:1] == ["resumed"]
    calls = {e["id"]: e for e in events if e["type"] == "tool_call"}
    decisions = [e for e in events if e["type"] == "approval_decision"]
    stepped = [calls[d["call_id"]]["input"]["step"] for d in decisions if d["call_id"] in calls
               and calls[d["call_id"]]["name"] == "rollout_step"]  # fmt: skip
    assert stepped == [10, 11, 12]
    assert {d["decided_by"] for d in decisions} == {"plan approval"}
    results = [e for e in events if e["type"] == "tool_result"]
    assert not [r for r in results if r["is_error"]], [r["text"] for r in results]
    check = next(r for r in results if r["name"] == "endpoint_check")
    assert check["data"]["report"]
    # step 9 ran once: the engine container on spark-b is the one it started before the kill
    after = engine_container(cluster)
    assert (after["id"], after["created_at"]) == (before["id"], before["created_at"])
