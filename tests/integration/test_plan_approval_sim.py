"""One plan, approved once, on the simulated pair: proposed by its hash, covering its own rollout.

The model is scripted (the real SDK against the strict replay server); every tool runs for real
against the simulated cluster over SSH. The operator is a scripted approver; every question it
is asked is in `seen`.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from agent.faces.headless import run_goal
from agent.loop.transcript import read_transcript
from agent.replay.redrive import sim_runtime
from agent.runtime.builder import open_runtime
from agent.runtime.resume import rebuild
from agent.runtime.settings import Settings
from agent.safety.approvers.scripted import ScriptedApprover
from agent.standin.server import MessagesAPIServer
from sim.cluster import SimCluster
from tests.support.example_receiver import receiver, serving
from tests.support.session_kit import sdk_client, text_turn, tool_turn

pytestmark = pytest.mark.slow

PLAN_INPUT = {
    "model": "Qwen/Qwen3.5-122B-A10B-FP8",
    "hosts": ["spark-a", "spark-b"],
    "model_size_gb": 119,
}
PATIENT = {"check_attempts": 20, "check_interval_s": 0.3}
WITH_STEPS = {"kind": "approved", "message": "", "approve_steps": True}
OPENING = [
    tool_turn([("r", "recon", {"hosts": "all"})]),
    tool_turn([("p", "plan_deployment", PLAN_INPUT)]),
]


def step(call_id: str, number: int) -> dict:
    return tool_turn([(call_id, "rollout_step", {"step": number, **PATIENT})])


async def computed(scenario: str) -> dict[str, Any]:
    """plan_deployment's data (the plan and its hash) on a fresh copy of `scenario`."""
    script = [*OPENING, text_turn("ok")]
    with MessagesAPIServer(script) as api:
        async with sim_runtime(
            scenario, client=sdk_client(api.url), approver_factory=lambda rules: None
        ) as runtime:
            await runtime.session.send("plan")
            events = read_transcript(runtime.transcript_path).events
    return next(e for e in events if e.type == "tool_result" and e.id == "p").data


async def session(scenario: str, turns: list[dict], answers: list) -> tuple[dict, Any, list]:
    """Run the turns; the tool results by call id, the approver, and the requests' bodies."""
    approver = ScriptedApprover(answers, name="operator")
    with MessagesAPIServer([*OPENING, *turns, text_turn("done")]) as api:
        async with sim_runtime(
            scenario, client=sdk_client(api.url), approver_factory=lambda rules: approver
        ) as runtime:
            await runtime.session.send("deploy")
        posts = [r.body for r in api.requests if r.path == "/v1/messages"]
    results = {
        block["tool_use_id"]: block
        for body in posts
        for block in body["messages"][-1]["content"]
        if block.get("type") == "tool_result"
    }
    return results, approver, posts


async def test_a_plan_approved_with_its_steps_rolls_out_without_another_question():
    data = await computed("seed-pair")
    count = len(data["plan"]["steps"])
    turns = [
        tool_turn([("a", "propose_plan", {"plan_hash": data["plan_hash"]})]),
        *(step(f"s{n}", n) for n in range(1, count + 1)),
    ]
    results, approver, _ = await session("seed-pair", turns, [WITH_STEPS])
    assert [r.tool for r in approver.seen] == ["propose_plan"]
    shown = approver.seen[0]
    assert shown.fingerprint == data["plan_hash"] and shown.input == data["plan"]
    for n in range(1, count + 1):
        assert not results[f"s{n}"].get("is_error"), results[f"s{n}"]["content"]
    assert "The rollout is complete" in results[f"s{count}"]["content"]


async def test_without_steps_each_step_asks_as_before():
    data = await computed("seed-pair")
    turns = [
        tool_turn([("a", "propose_plan", {"plan_hash": data["plan_hash"]})]),
        step("s1", 1),
    ]
    _, approver, _ = await session("seed-pair", turns, [("approved", "")] * 2)
    assert [r.tool for r in approver.seen] == ["propose_plan", "rollout_step"]


async def test_a_call_outside_the_plan_asks_alone_and_the_steps_after_it_do_not():
    data = await computed("seed-pair")
    count = len(data["plan"]["steps"])
    extra = {"host": "spark-a", "action": "rm", "container": "vllm_node"}
    turns = [
        tool_turn([("a", "propose_plan", {"plan_hash": data["plan_hash"]})]),
        step("s1", 1),
        tool_turn([("x", "docker_ctl", extra)]),
        *(step(f"s{n}", n) for n in range(2, count + 1)),
    ]
    results, approver, _ = await session("seed-pair", turns, [WITH_STEPS, ("approved", "")])
    assert [r.tool for r in approver.seen] == ["propose_plan", "docker_ctl"]
    assert "The rollout is complete" in results[f"s{count}"]["content"]


async def test_a_failed_step_withdraws_what_is_left_of_the_approval(tmp_path):
    """fresh-pair, but the registry no longer serves the image: the pull (step 3) fails, and the
    download (step 4), granted with the plan a moment before, now asks."""
    gone = tmp_path / "registry-without-the-image.yaml"
    gone.write_text(
        "extends: fresh-pair\nname: registry-without-the-image\n"
        "hosts:\n  spark-a:\n    docker:\n      pullable: []\n"
    )
    data = await computed(str(gone))
    assert data["plan"]["steps"][2]["title"].startswith("pull ")
    turns = [
        tool_turn([("a", "propose_plan", {"plan_hash": data["plan_hash"]})]),
        *(step(f"s{n}", n) for n in range(1, 5)),
    ]
    results, approver, _ = await session(str(gone), turns, [WITH_STEPS, ("denied", "")])
    assert results["s3"].get("is_error") and not results["s2"].get("is_error")
    assert [r.tool for r in approver.seen] == ["propose_plan", "rollout_step"]
    assert approver.seen[1].call_id == "s4" and results["s4"].get("is_error")


async def test_proposing_by_hash_sends_no_copy_and_an_altered_copy_is_not_the_computed_plan():
    data = await computed("seed-pair")
    altered = {**data["plan"], "goal": data["plan"]["goal"] + "."}
    by_hash = [tool_turn([("a", "propose_plan", {"plan_hash": data["plan_hash"]})])]
    by_copy = [tool_turn([("a", "propose_plan", altered)]), step("s1", 1)]
    _, _, hash_posts = await session("seed-pair", by_hash, [("approved", "")])
    results, approver, copy_posts = await session("seed-pair", by_copy, [("approved", "")] * 2)
    # the request that carries the proposal back to the API: the copy costs the plan's size
    hash_size, copy_size = (len(json.dumps(posts[3])) for posts in (hash_posts, copy_posts))
    assert copy_size - hash_size > len(json.dumps(data["plan"])) - 200
    assert approver.seen[0].fingerprint != data["plan_hash"]
    assert "Plan approved" in results["a"]["content"]
    refused = results["s1"]
    assert refused.get("is_error") and "No approved deployment plan" in refused["content"]


async def test_an_unknown_hash_is_refused_with_what_was_computed():
    data = await computed("seed-pair")
    turns = [tool_turn([("a", "propose_plan", {"plan_hash": "plan:0000000000000000"})])]
    results, approver, _ = await session("seed-pair", turns, [])
    assert approver.seen == []
    assert results["a"].get("is_error") and data["plan_hash"] in results["a"]["content"]


async def _live(sim: SimCluster, tmp_path, turns, *, transcript, answers, resume=None):
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
        posts = [r.body for r in api.requests if r.path == "/v1/messages"]
    results = {
        block["tool_use_id"]: block
        for body in posts
        for block in body["messages"][-1]["content"]
        if block.get("type") == "tool_result"
    }
    return results, approver


async def test_a_resumed_session_keeps_which_steps_are_approved_and_used(tmp_path):
    """The transcript as a crash between steps 1 and 2 leaves it (no end of session): resumed,
    step 2 runs unasked; step 1, used, does not run again."""
    data = await computed("seed-pair")
    first = tmp_path / "first.jsonl"
    async with SimCluster("seed-pair", tmp_path / "sim") as sim:
        turns = [
            *OPENING,
            tool_turn([("a", "propose_plan", {"plan_hash": data["plan_hash"]})]),
            step("s1", 1),
        ]
        before, _ = await _live(sim, tmp_path, turns, transcript=first, answers=[WITH_STEPS])
        assert not before["s1"].get("is_error"), before["s1"]["content"]
        events = [e for e in read_transcript(first).events if e.type != "session_end"]
        after, approver = await _live(
            sim,
            tmp_path,
            [step("s2", 2), step("again", 1)],
            transcript=tmp_path / "resumed.jsonl",
            answers=[("approved", "")],
            resume=rebuild(events),
        )
    assert not after["s2"].get("is_error"), after["s2"]["content"]
    assert [r.tool for r in approver.seen] == ["rollout_step"]  # step 1 again: no longer granted
    again = after["again"]
    assert (
        again.get("is_error") and "Step 1 cannot run now: it has passed already" in again["content"]
    )


SECRET = "webhook-secret-for-tests-0123456789"
HOOK_RULES = """\
approve:
  - {tool: propose_plan, approve_steps: true}
  - {tool: docker_ctl}
"""


async def test_headless_the_webhook_decides_the_plan_once_and_each_deviation_once(
    cluster, tmp_path
):
    """`scout run` with webhook approvals: one decision for the plan with its steps, none for
    its rollout, one for the call the plan does not hold."""
    data = await computed("seed-pair")
    count = len(data["plan"]["steps"])
    rules = tmp_path / "rules.yaml"
    rules.write_text(HOOK_RULES)
    extra = {"host": "spark-a", "action": "rm", "container": "vllm_node"}
    script = [
        *OPENING,
        tool_turn([("a", "propose_plan", {"plan_hash": data["plan_hash"]})]),
        step("s1", 1),
        tool_turn([("x", "docker_ctl", extra)]),
        *(step(f"s{n}", n) for n in range(2, count + 1)),
        text_turn("done"),
    ]
    server = receiver.make_server(
        "127.0.0.1", 0, SECRET.encode(), receiver.RulesDecider.from_file(rules), log=io.StringIO()
    )
    out, err = io.StringIO(), io.StringIO()
    with MessagesAPIServer(script) as api, serving(server) as hook_url:
        settings = Settings(
            api_key="test",
            base_url=api.url,
            inventory=cluster.write_inventory(tmp_path / "sim" / "inventory.yaml"),
            transcripts_dir=tmp_path / "transcripts",
            log_file=tmp_path / "scout.log",
        )
        code = await run_goal(
            settings,
            "deploy",
            approvals="webhook",
            webhook_url=hook_url,
            webhook_secret=SECRET,
            out=out,
            err=err,
        )
    assert code == 0, err.getvalue()
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    decisions = [e for e in events if e["type"] == "approval_decision"]
    by_hook = [
        (d["call_id"], d["approve_steps"]) for d in decisions if d["decided_by"] == str(rules)
    ]
    assert by_hook == [("plan", True), ("x", False)]
    by_plan = [d["call_id"] for d in decisions if d["decided_by"] == "plan approval"]
    assert by_plan == [f"s{n}" for n in range(1, count + 1)]
