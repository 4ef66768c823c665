"""The fresh-pair deployment, headless: the webhook decides the plan once, and each deviation once.

`scout run` (run_goal) drives the story's own recorded turns (the real SDK against the replay
server) on a fresh simulated pair; approvals come from the example signed webhook receiver,
which approves the plan with its steps and any ssh_exec. What counts is what the receiver was
asked: the plan alone for the story as recorded, and one more for a call that is not a step of
it (the step's own command with a changed flag). The same deviation, recorded as a story and
told by `scout demo`, shows two approval panels: the plan with its steps, and that call.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agent.faces.demo import DEMO_GOAL
from agent.faces.headless import EXIT_DONE, run_goal
from agent.replay.redrive import sim_runtime
from agent.runtime.settings import Settings
from agent.safety.approvers.scripted import ScriptedApprover
from agent.standin.server import MessagesAPIServer
from sim.cluster import SimCluster
from tests.support.counting_decider import CountingDecider
from tests.support.example_receiver import receiver, serving
from tests.support.scout_cli import scout
from tests.support.session_kit import sdk_client
from tests.support.story_script import story_script, tool_use_turn, turn_index

pytestmark = pytest.mark.slow

SECRET = "webhook-secret-for-tests-0123456789"
RULES = """\
approve:
  - {tool: propose_plan, approve_steps: true}
  - {tool: ssh_exec}
"""
GOAL = "Serve Qwen/Qwen3.5-122B-A10B-FP8 with TP=2 across spark-a and spark-b, and prove it."
# step 1 of the fresh-pair plan is `docker stop vllm_node` on spark-a; this is that command
# with one flag more, so it is no step of the approved plan
CHANGED_FLAG = {"host": "spark-a", "command": "docker stop --time=30 vllm_node"}
WITH_STEPS = {"kind": "approved", "message": "", "approve_steps": True}


def deviating_script() -> list[dict[str, Any]]:
    """The story's turns with step 1's command, one flag changed, run by ssh_exec before it."""
    script = story_script()
    first = turn_index(script, "rollout_step", step=1)
    script.insert(first, tool_use_turn([("changed", "ssh_exec", CHANGED_FLAG)]))
    return script


async def run_headless(
    sim: SimCluster, tmp_path: Path, script: list[dict[str, Any]]
) -> tuple[int, list[dict[str, Any]], CountingDecider, str]:
    """`scout run` with webhook approvals over `script`: exit status, events, the receiver."""
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    decider = CountingDecider(rules)
    server = receiver.make_server("127.0.0.1", 0, SECRET.encode(), decider, log=io.StringIO())
    out, err = io.StringIO(), io.StringIO()
    with MessagesAPIServer(script) as api, serving(server) as hook_url:
        settings = Settings(
            api_key="test",
            base_url=api.url,
            inventory=sim.write_inventory(tmp_path / "sim" / "inventory.yaml"),
            transcripts_dir=tmp_path / "transcripts",
            log_file=tmp_path / "scout.log",
        )
        code = await run_goal(
            settings,
            GOAL,
            approvals="webhook",
            webhook_url=hook_url,
            webhook_secret=SECRET,
            out=out,
            err=err,
        )
        assert api.remaining() == 0, "the story's turns were not all asked for"
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    return code, events, decider, err.getvalue()


def served(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The endpoint check's result: the deployment's proof."""
    check = next(e for e in events if e["type"] == "tool_result" and e["name"] == "endpoint_check")
    assert not check["is_error"], check["text"]
    return check


@pytest.mark.timeout(300)
@pytest.mark.parametrize("cluster", ["fresh-pair"], indirect=True)
async def test_the_webhook_decides_the_fresh_pair_plan_once(cluster, tmp_path):
    script = story_script()
    code, events, decider, err = await run_headless(cluster, tmp_path, script)
    assert code == EXIT_DONE, err
    assert [r["tool"] for r in decider.asked] == ["propose_plan"]
    steps = [e for e in events if e["type"] == "tool_result" and e["name"] == "rollout_step"]
    assert len(steps) == 12 and not [s for s in steps if s["is_error"]]
    by_plan = [e for e in events if e["type"] == "approval_decision"]
    assert {d["decided_by"] for d in by_plan[1:]} == {"plan approval"}
    served(events)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("cluster", ["fresh-pair"], indirect=True)
async def test_a_step_with_a_changed_flag_is_the_one_more_decision(cluster, tmp_path):
    code, events, decider, err = await run_headless(cluster, tmp_path, deviating_script())
    assert code == EXIT_DONE, err
    assert [r["tool"] for r in decider.asked] == ["propose_plan", "ssh_exec"]
    assert decider.asked[1]["input"] == CHANGED_FLAG
    results = {e["id"]: e for e in events if e["type"] == "tool_result"}
    assert not results["changed"]["is_error"], results["changed"]["text"]
    steps = [e for e in events if e["type"] == "tool_result" and e["name"] == "rollout_step"]
    assert len(steps) == 12 and not [s for s in steps if s["is_error"]]
    served(events)


@pytest.mark.timeout(400)
async def test_a_recorded_story_that_deviates_asks_for_that_call_alone(tmp_path):
    """Recorded as the bundled story is (scripts/record_demo.py: the real SDK, a fresh pair, the
    operator approving the plan with its steps and the rest), then told by `scout demo`."""
    story = tmp_path / "deviating-story.jsonl"
    operator = ScriptedApprover([WITH_STEPS, ("approved", "")], name="operator")
    with MessagesAPIServer(deviating_script(), model="claude-sonnet-4-5") as api:
        async with sim_runtime(
            "fresh-pair",
            client=sdk_client(api.url),
            approver_factory=lambda rules: operator,
            model="claude-sonnet-4-5",
            goal=DEMO_GOAL,
            transcript_path=story,
        ) as runtime:
            outcome = await runtime.session.send(DEMO_GOAL)
            runtime.session.end("done")
    assert outcome.stop == "end_turn" and [r.tool for r in operator.seen] == [
        "propose_plan",
        "ssh_exec",
    ]

    done = scout("demo", "--fast", "--transcript", str(story), "--sim", "fresh-pair", home=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    panels = done.stdout.split("approval needed")[1:]
    assert len(panels) == 2
    assert "propose_plan" in panels[0] and CHANGED_FLAG["command"] in panels[1]
    flat = " ".join(done.stdout.split())
    assert "approved by plan approval: step 1 as approved with the plan" in flat
    assert "approved by plan approval: the proof as approved with the plan" in flat
