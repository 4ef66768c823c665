"""URL-mode approvals over MCP: a client that declares URL-mode elicitation is pointed at
Scout's approval page; accepting it approves nothing, old or forged request states run nothing,
and a person's decision made while the page is shown runs the call it was given for, once.

Needs the optional extra: pip install -e '.[mcp,test]' (the `mcp` SDK 2.3).
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("mcp", reason="needs the extra: pip install -e '.[mcp,test]' (mcp 2.3)")

from mcp.types import ElicitRequestURLParams, ElicitResult, InputRequiredResult

from agent.faces.cli import main
from tests.support.mcp_kit import (
    at_a_terminal,
    ran_state_changes,
    scout_mcp,
    status,
    story_calls,
    transcript_events,
)
from tests.support.scout_cli import scout

PAGE = "https://scout.example/approvals/{id}"
SHOWN = {"scout_approval": ElicitResult(action="accept")}


async def accept_everything(context, params) -> ElicitResult:
    return ElicitResult(action="accept")


def page_id(request: object) -> str:
    params = request.params  # type: ignore[attr-defined]
    assert isinstance(params, ElicitRequestURLParams), params
    prefix = PAGE.removesuffix("{id}")
    assert params.url.startswith(prefix) and "approves nothing" in params.message
    return params.url.removeprefix(prefix)


@pytest.mark.slow
@pytest.mark.timeout(400)
async def test_accepting_every_page_and_replaying_old_states_runs_nothing(tmp_path):
    home = tmp_path / "home"
    states: list[str] = []
    pages: list[str] = []
    replays = 0
    args = ["--sim", "fresh-pair", "--approval-page", PAGE]
    async with scout_mcp(home, *args, elicitation=accept_everything) as client:
        for name, arguments in story_calls():
            for old in states:  # every state seen so far, "accepted", on this call
                replayed = await client.session.call_tool(
                    name, arguments, input_responses=SHOWN, request_state=old
                )
                assert status(replayed) == "refused", replayed.content[0].text
                assert "requestState" in replayed.content[0].text
                replays += 1
            raw = await client.session.call_tool(name, arguments, allow_input_required=True)
            if not isinstance(raw, InputRequiredResult):  # read, or walled before any plan
                assert status(raw) in ("done", "refused"), raw.content[0].text
                continue
            [request] = raw.input_requests.values()
            pages.append(page_id(request))
            states.append(raw.request_state)
            shown = await client.session.call_tool(
                name, arguments, input_responses=SHOWN, request_state=raw.request_state
            )
            assert status(shown) == "approval_pending"  # shown, accepted, not decided
            assert shown.structured_content["approval_id"] == pages[-1]
            automatic = await client.call_tool(name, arguments)  # the SDK's own retry loop
            assert status(automatic) == "approval_pending"
        listed = await asyncio.to_thread(scout, "approvals", home=home)
    assert pages and all(approval in listed.stdout for approval in pages)
    events = transcript_events(home)
    assert ran_state_changes(events) == []
    decided = {e["decision"] for e in events if e["type"] == "approval_decision"}
    assert decided == {"pending"}
    refused = [e for e in events if e["type"] == "notice" and e["kind"] == "mcp_state_refused"]
    assert replays > len(states) and len(refused) == replays


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_a_persons_decision_on_the_page_runs_the_call_once(tmp_path):
    home = tmp_path / "home"
    decided: list[str] = []

    async def person_decides(context, params) -> ElicitResult:
        approval = page_id(type("Shown", (), {"params": params})())
        shown = await asyncio.to_thread(at_a_terminal, home, "approvals", approval, answers=["y"])
        assert "approved" in shown
        decided.append(approval)
        return ElicitResult(action="accept")

    calls = story_calls()
    plan_at = next(n for n, (name, _) in enumerate(calls) if name == "propose_plan")
    args = ["--sim", "fresh-pair", "--approval-page", PAGE]
    async with scout_mcp(home, *args, elicitation=person_decides) as client:
        for name, arguments in calls[:plan_at]:
            assert status(await client.call_tool(name, arguments)) == "done"
        plan_call = calls[plan_at][1]
        raw = await client.session.call_tool("propose_plan", plan_call, allow_input_required=True)
        assert isinstance(raw, InputRequiredResult) and not decided
        [request] = raw.input_requests.values()
        await person_decides(None, request.params)
        again = await client.session.call_tool(
            "propose_plan", plan_call, input_responses=SHOWN, request_state=raw.request_state
        )
        assert status(again) == "done", again.content[0].text
        replayed = await client.session.call_tool(
            "propose_plan", plan_call, input_responses=SHOWN, request_state=raw.request_state
        )
        assert status(replayed) == "refused" and "used already" in replayed.content[0].text
    events = transcript_events(home)
    plan = [e for e in events if e["type"] == "approval_decision" and e["decision"] == "approved"]
    assert len(decided) == 1 and len(plan) == 1


@pytest.mark.parametrize("page", ["https://scout.example/approvals", "file:///tmp/{id}", "{id}"])
def test_an_approval_page_without_a_place_for_the_id_is_refused(
    tmp_path, monkeypatch, capsys, page
):
    monkeypatch.setenv("SCOUT_HOME", str(tmp_path))
    assert main(["mcp", "--sim", "fresh-pair", "--approval-page", page]) == 1
    err = capsys.readouterr().err
    assert (
        err
        == f"scout mcp: --approval-page must be an http(s) URL with {{id}} in it, not {page!r}\n"
    )
