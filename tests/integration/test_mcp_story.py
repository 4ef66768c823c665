"""`scout mcp` on the fresh-pair simulator, driven by the MCP SDK's own client: the recorded
story's calls, in order, reach a proven endpoint, and what changed state ran only under a
Scout-side approval: the webhook was asked once, for the plan; its steps ran on the grant.

Needs the optional extra: pip install -e '.[mcp,test]' (the `mcp` SDK 2.3).
"""

from __future__ import annotations

import asyncio
import io

import pytest

pytest.importorskip("mcp", reason="needs the extra: pip install -e '.[mcp,test]' (mcp 2.3)")

from mcp import MCPError

from tests.support.counting_decider import CountingDecider
from tests.support.example_receiver import receiver, serving
from tests.support.mcp_kit import (
    ran_state_changes,
    scout_mcp,
    status,
    story_calls,
    transcript_events,
    until_decided,
)
from tests.support.scout_cli import scout

SECRET = "webhook-secret-for-mcp-tests-0123456789"
RULES = "approve:\n  - {tool: propose_plan, approve_steps: true}\n"


@pytest.mark.slow
@pytest.mark.timeout(400)
async def test_the_story_over_mcp_reaches_a_proven_endpoint_on_one_decision(tmp_path):
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    decider = CountingDecider(rules)
    hook = receiver.make_server("127.0.0.1", 0, SECRET.encode(), decider, log=io.StringIO())
    home = tmp_path / "home"
    outcomes = []
    with serving(hook) as hook_url:
        args = ["--sim", "fresh-pair", "--approvals", "webhook", "--webhook-url", hook_url]
        env = {"SCOUT_WEBHOOK_SECRET": SECRET}
        async with scout_mcp(home, *args, env=env) as client:
            for name, arguments in story_calls():
                result = await until_decided(client, name, arguments)
                outcomes.append((name, status(result), result.content[0].text))
    failed = [o for o in outcomes if o[1] != "done"]
    assert not failed, failed
    name, _, proof = outcomes[-1]
    assert name == "endpoint_check" and "Qwen/Qwen3.5-122B-A10B-FP8" in proof

    assert [asked["tool"] for asked in decider.asked] == ["propose_plan"]
    events = transcript_events(home)
    decisions = {e["call_id"]: e for e in events if e["type"] == "approval_decision"}
    ran = ran_state_changes(events)
    assert len(ran) == 13  # the plan's 12 steps and its proof
    assert {decisions[e["id"]]["decided_by"] for e in ran} == {"plan approval"}
    plan = [e for e in events if e["type"] == "approval_decision" and e["call_id"] == "plan"]
    assert {d["decision"] for d in plan[:-1]} <= {"pending"}  # asked, then collected once
    assert (plan[-1]["decision"], plan[-1]["decided_by"]) == ("approved", str(rules))
    callers = {(e["client"], e["tool"]) for e in events if e["type"] == "client_call"}
    assert ("scripted-host 1.0", "rollout_step") in callers

    [transcript] = (home / "transcripts").glob("mcp-*.jsonl")
    shown = await asyncio.to_thread(scout, "replay", str(transcript), home=tmp_path / "replay")
    assert shown.returncode == 0 and "scripted-host 1.0" in shown.stdout
    assert "calls endpoint_check" in shown.stdout, shown.stderr
    again = await asyncio.to_thread(
        scout, "replay", str(transcript), "--sim", "fresh-pair", home=tmp_path / "replay"
    )
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    calls = sum(1 for e in events if e["type"] == "client_call")
    assert f"no drift: {calls} client calls replayed as recorded" in again.stdout


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_discover_is_answered_before_the_session_opens(tmp_path):
    home = tmp_path / "home"
    async with scout_mcp(home, "--sim", "fresh-pair") as client:
        discovered = client.session.discover_result
        assert discovered is not None and "2026-07-28" in discovered.supported_versions
        assert client.server_info is not None and client.server_info.name == "scout"
        assert discovered.capabilities.tools is not None
        assert "propose_plan" in (discovered.instructions or "")
        # nothing opened yet: no simulator, no session, no transcript
        assert not list((home / "transcripts").glob("mcp-*.jsonl"))


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_a_setup_problem_is_the_first_requests_error_in_words(tmp_path):
    async with scout_mcp(tmp_path / "home") as client:  # neither --inventory nor --sim
        with pytest.raises(MCPError, match="no inventory: pass --inventory FILE"):
            await client.list_tools()
