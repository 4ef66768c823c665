"""ScriptedClient drives a real session in process: turns in, requests recorded, clear failures."""

import pytest

from agent.loop.model_turn import (
    AssistantTurn,
    ModelError,
    TurnRequest,
    cached_request_params,
)
from agent.loop.scripted_client import RequestRefused, ScriptedClient, ScriptExhausted
from agent.loop.token_estimate import estimate_input_tokens
from agent.loop.transcript import read_transcript
from tests.support.probe_tools import EchoTool
from tests.support.session_kit import session_with, text_turn, tool_turn


async def test_a_scripted_tool_turn_runs_the_tool_and_the_next_request_carries_its_result(
    tmp_path,
):
    echo = EchoTool()
    client = ScriptedClient(
        [tool_turn([("toolu_1", "echo", {"text": "hello"})], text="Echoing."), text_turn("Done.")]
    )
    session = session_with(client, [echo], tmp_path)
    outcome = await session.send("say hello")

    assert outcome.stop == "end_turn" and outcome.text == "Done."
    assert echo.runs == ["hello"]
    first, second = client.requests
    assert first.messages[-1]["content"] == [{"type": "text", "text": "say hello"}]
    (result,) = second.messages[-1]["content"]
    assert (result["tool_use_id"], result["content"]) == ("toolu_1", "hello")
    client.assert_done()
    events = read_transcript(tmp_path / "session.jsonl").events
    assert [e.type for e in events].count("model_response") == 2


async def test_running_past_the_script_fails_the_test_with_what_was_asked(tmp_path):
    client = ScriptedClient([tool_turn([("toolu_1", "echo", {"text": "again"})])])
    session = session_with(client, [EchoTool()], tmp_path)
    with pytest.raises(ScriptExhausted, match=r"the script has 1 turns .* asked for turn 2"):
        await session.send("loop")


async def test_a_scripted_model_error_ends_the_turn_like_a_failed_call(tmp_path):
    client = ScriptedClient([ModelError("The API failed (500): boom; try again shortly.")])
    outcome = await session_with(client, [], tmp_path).send("hello")
    assert outcome.stop == "error" and "boom" in outcome.message


async def test_turns_given_as_objects_stream_their_text():
    turn = AssistantTurn(content=[{"type": "text", "text": "hi"}], stop_reason="end_turn")
    client = ScriptedClient([turn])
    streamed: list[str] = []
    messages = [{"role": "user", "content": "hello"}]
    request = TurnRequest(model="m", max_tokens=10, system="s", tools=[], messages=messages)
    assert (await client.stream(request, streamed.append)).text() == "hi"
    assert streamed == ["hi"]
    with pytest.raises(AssertionError, match="never asked for"):
        ScriptedClient([turn]).assert_done()


async def test_a_request_the_api_would_refuse_fails_the_test():
    client = ScriptedClient([text_turn("never sent")])
    orphan = {"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}
    request = TurnRequest(
        model="m",
        max_tokens=10,
        system="s",
        tools=[],
        messages=[{"role": "user", "content": [orphan]}],
    )
    with pytest.raises(RequestRefused, match="unexpected `tool_use_id`"):
        await client.stream(request, lambda text: None)
    assert client.remaining == 1


async def test_unscripted_usage_is_the_estimate_of_the_request(tmp_path):
    client = ScriptedClient([{"turn": {"content": [{"type": "text", "text": "Done."}]}}])
    session = session_with(client, [], tmp_path)
    await session.send("how big is this request?")
    (row,) = session.usage.per_turn
    assert row.source == "estimate" and session.usage.cost_usd == 0
    body = cached_request_params(client.requests[0])
    assert row.prompt_tokens == estimate_input_tokens(body)


def test_a_malformed_script_item_is_named():
    with pytest.raises(ValueError, match="script item 2 must be"):
        ScriptedClient([text_turn("ok"), {"content": []}])
