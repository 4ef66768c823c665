"""A planner served by vLLM: the replay server's vLLM dialect, read through the real SDK.

The bundled stories replay through it with no drift, every tool call parsed from vLLM's stream
shape; and each way vLLM differs from Anthropic's API (agent/standin/vllm_wire.py,
vllm_rules.py) is asserted as a client sees it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import pytest

from agent.faces.doctor import check_api_key
from agent.loop.events import ModelResponse, SessionStart
from agent.loop.model_client import AnthropicClient
from agent.loop.model_turn import ModelError, TurnRequest
from agent.loop.transcript import read_transcript
from agent.replay.client import ReplayClient
from agent.replay.recordings import recording_path
from agent.replay.redrive import redrive
from agent.replay.served import ServedReplay, recorded_script
from agent.runtime.settings import Settings
from agent.standin.server import MessagesAPIServer
from tests.support.probe_tools import EchoTool
from tests.support.session_kit import make_session, text_turn, tool_turn

KEY = "vllm-key-not-secret"
MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
OTHER = "claude-sonnet-4-5"  # what Scout asks for unless told the served model's name
STORIES = {
    "seed-pair-deploy": "seed-pair",
    "fresh-pair-deploy": "fresh-pair",
    "spark-trio-deploy": "spark-trio",
}


def _sdk(url: str, key: str | None = KEY) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key=key, base_url=url, max_retries=0)


def _quiet(_text: str) -> None:
    """Streamed text is not the point here."""


def _ask(**extra: Any) -> dict[str, Any]:
    return {
        "model": MODEL,
        "max_tokens": 256,
        "messages": [{"role": "user", "content": "go"}],
        **extra,
    }


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("story", STORIES)
async def test_a_bundled_story_replays_through_vllm_with_no_drift(story: str, tmp_path: Path):
    with recording_path(story) as path:
        assert path is not None
        events = read_transcript(path).events
    start = next(e for e in events if isinstance(e, SessionStart))
    served: list[ServedReplay] = []

    def serve(replay: ReplayClient) -> ServedReplay:
        sdk = AnthropicClient(api_key=KEY, base_url=api.url, max_retries=0)
        served.append(ServedReplay(replay, sdk))
        return served[0]

    script = recorded_script(events)
    with MessagesAPIServer(script, model=start.model, dialect="vllm", api_key=KEY) as api:
        again = tmp_path / "again.jsonl"
        outcome = await redrive(events, STORIES[story], serve=serve, transcript_path=again)
        asked = [request.served for request in api.requests]

    assert outcome.report.clean, outcome.report.describe()
    assert outcome.report.turns_played == len(script) == outcome.report.turns_recorded
    assert asked == ["turn"] * len(script)  # nothing Scout sent was refused
    assert served[0].garbled == []  # every tool call parsed from vLLM's stream as recorded
    responses = [e for e in read_transcript(again).events if isinstance(e, ModelResponse)]
    assert len(responses) == len(script)
    assert all(set(r.usage) == {"input_tokens", "output_tokens"} for r in responses)
    assert outcome.endpoint_check() is not None  # the story still ends with its proof


async def test_the_stream_has_vllms_shape_and_a_tool_call_arrives_whole():
    call = {"host": "spark-a", "command": "nvidia-smi --query-gpu=name --format=csv"}
    script = [tool_turn([("toolu_1", "ssh_exec", call)], text="Checking the GPU first.")]
    with MessagesAPIServer(script, model=MODEL, dialect="vllm", api_key=KEY) as api:
        sdk = _sdk(api.url)
        seen = []
        async with sdk.messages.stream(**_ask()) as stream:
            async for event in stream:
                seen.append(event)
            final = await stream.get_final_message()

    kinds = [event.type for event in seen if not event.type.endswith(("text", "json"))]
    assert "ping" not in kinds
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert seen[0].message.id.startswith("chatcmpl-")
    starts = [e.content_block for e in seen if e.type == "content_block_start"]
    assert [block.type for block in starts] == ["text", "tool_use"]
    assert starts[1].input == {}
    pieces = [
        e.delta.partial_json
        for e in seen
        if e.type == "content_block_delta" and e.delta.type == "input_json_delta"
    ]
    assert len(pieces) > 1 and all(pieces)  # in fragments, never an empty one
    assert final.content[1].input == call and final.content[1].id == "toolu_1"
    assert final.stop_reason == "tool_use" and final.stop_sequence is None
    assert final.usage.cache_read_input_tokens is None
    assert final.usage.cache_creation_input_tokens is None
    assert final.usage.input_tokens > 0 and final.usage.output_tokens > 0


async def test_stop_reasons_are_the_three_vllm_maps_to():
    script = [text_turn("stopped by a sequence", stop_reason="stop_sequence")]
    script.append(text_turn("cut at the limit", stop_reason="max_tokens"))
    with MessagesAPIServer(script, model=MODEL, dialect="vllm") as api:
        sdk = _sdk(api.url)
        by_sequence = await sdk.messages.create(**_ask(stop_sequences=["END"]))
        at_limit = await sdk.messages.create(**_ask())
    assert (by_sequence.stop_reason, by_sequence.stop_sequence) == ("end_turn", None)
    assert at_limit.stop_reason == "max_tokens"
    assert by_sequence.id.startswith("chatcmpl-")
    assert by_sequence.usage.cache_read_input_tokens is None
    for never in ("pause_turn", "refusal"):
        with pytest.raises(ValueError, match=f"vLLM never answers stop_reason '{never}'"):
            MessagesAPIServer([text_turn("x", stop_reason=never)], dialect="vllm")


async def test_what_vllm_ignores_passes_and_what_it_rejects_says_so_in_its_shapes():
    cached = [{"type": "text", "text": "system", "cache_control": {"type": "ephemeral"}}]
    ignored = {
        "system": cached,
        "metadata": {"user_id": "u"},
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
    }
    with MessagesAPIServer([text_turn("fine")], model=MODEL, dialect="vllm", api_key=KEY) as api:
        sdk = _sdk(api.url)
        assert (await sdk.messages.create(**_ask(**ignored))).content[0].text == "fine"

        with pytest.raises(anthropic.NotFoundError) as wrong_model:
            await sdk.messages.create(**{**_ask(), "model": OTHER})
        document = [{"type": "document", "source": {"type": "text", "data": "x"}}]
        with pytest.raises(anthropic.BadRequestError) as bad_block:
            await sdk.messages.create(**_ask(messages=[{"role": "user", "content": document}]))
        server_tool = [{"type": "web_search_20250305", "name": "web_search"}]
        with pytest.raises(anthropic.BadRequestError) as bad_tool:
            await sdk.messages.create(**_ask(tools=server_tool))
        with pytest.raises(anthropic.AuthenticationError) as bad_key:
            await _sdk(api.url, "another-key").messages.create(**_ask())
        count = await sdk.messages.count_tokens(model=MODEL, messages=_ask()["messages"])
        with pytest.raises(anthropic.NotFoundError) as no_route:
            await sdk.models.list()

    assert wrong_model.value.body == {
        "type": "error",
        "error": {
            "type": "NotFoundError",
            "message": "The model `claude-sonnet-4-5` does not exist.",
        },
    }
    assert bad_block.value.body["error"]["type"] == "Bad Request"  # OpenAI's shape, not Anthropic's
    assert bad_block.value.body["error"]["param"] == "body.messages.0.content.0.type"
    assert bad_tool.value.body["error"]["param"] == "body.tools.0.input_schema"
    assert bad_key.value.body == {"error": "Unauthorized"}
    assert count.input_tokens > 0
    assert no_route.value.body == {"detail": "Not Found"}
    assert [r.served for r in api.requests] == [
        "turn",
        "model_not_found",
        "invalid_request",
        "invalid_request",
        "unauthorized",
        "count_tokens",
        "not_found",
    ]


async def test_scout_needs_no_key_for_a_server_without_one_and_names_it_when_refused():
    request = TurnRequest(MODEL, 256, "system", [], [{"role": "user", "content": "go"}])
    with MessagesAPIServer([text_turn("served")], model=MODEL, dialect="vllm") as open_api:
        turn = await AnthropicClient(api_key=None, base_url=open_api.url).stream(
            request, lambda _text: None
        )
    assert turn.text() == "served"
    assert "authorization" not in open_api.requests[0].headers
    with MessagesAPIServer([], model=MODEL, dialect="vllm", api_key=KEY) as api:
        client = AnthropicClient(api_key="wrong", base_url=api.url, max_retries=0)
        url = api.url
        with pytest.raises(ModelError) as refused:
            await client.stream(request, _quiet)
    assert url in str(refused.value) and "--api-key" in str(refused.value)


async def test_a_failure_inside_vllms_stream_is_an_internal_error_scout_does_not_retry():
    script = [{"stream_error": {"message": "engine died", "after_blocks": 1}}]
    script[0]["stream_error"]["partial"] = text_turn("half an answer")["turn"]
    with MessagesAPIServer(script, model=MODEL, dialect="vllm") as api:
        request = TurnRequest(MODEL, 256, "system", [], [{"role": "user", "content": "go"}])
        with pytest.raises(ModelError, match="engine died"):
            await AnthropicClient(api_key=KEY, base_url=api.url).stream(request, _quiet)
    assert len(api.requests) == 1


async def test_cost_is_counted_without_cache_discounts(tmp_path: Path):
    """vLLM reports no cache fields: every prompt token is billed as input, none discounted."""
    script = [
        tool_turn([("toolu_1", "echo", {"text": "hi"})]),
        text_turn("done", input_tokens=1000, output_tokens=200),
    ]
    script[0]["turn"]["usage"] = {"input_tokens": 3000, "output_tokens": 100}
    with MessagesAPIServer(script, model="claude-test", dialect="vllm") as api:
        session = make_session(api.url, [EchoTool()], tmp_path)
        await session.send("echo hi")
    usage = session.usage
    assert (usage.input_tokens, usage.output_tokens) == (4000, 300)
    assert usage.cache_read_input_tokens == usage.cache_creation_input_tokens == 0
    assert usage.estimated_turns == 0
    assert usage.cost_usd == pytest.approx((4000 * 3.0 + 300 * 15.0) / 1_000_000)


async def test_over_vllms_context_window_scout_compacts_and_asks_again(tmp_path: Path):
    """vLLM words the overflow its own way; Scout still knows it, compacts, and carries on."""
    words = " ".join(f"word{i}" for i in range(1200))
    script = [tool_turn([(f"toolu_{n}", "echo", {"text": f"{n} {words}"})]) for n in (1, 2, 3)]
    script.append(text_turn("all echoed"))
    # 8192 output tokens (Scout's default) + 14000 of prompt: the fourth request is over by ~1000
    with MessagesAPIServer(
        script, model="claude-test", dialect="vllm", max_model_len=8192 + 14_000
    ) as api:
        session = make_session(api.url, [EchoTool()], tmp_path)
        outcome = await session.send("echo three times")
    served = [request.served for request in api.requests]
    assert served == ["turn", "turn", "turn", "context_overflow", "turn"]
    assert outcome.stop == "end_turn" and outcome.text == "all echoed"
    assert session.usage.compacted.compactions >= 1


async def test_a_reasoning_models_thinking_comes_back_signed_and_is_sent_again(tmp_path: Path):
    """`--reasoning-parser` on: vLLM streams a thinking block, signed at its end with a uuid."""
    thinking = {"type": "thinking", "thinking": "The user wants an echo. I will call echo."}
    first = tool_turn([("toolu_1", "echo", {"text": "hi"})])
    first["turn"]["content"].insert(0, thinking)
    script = [first, text_turn("echoed")]
    with MessagesAPIServer(script, model="claude-test", dialect="vllm") as api:
        session = make_session(api.url, [EchoTool()], tmp_path)
        outcome = await session.send("echo hi")
    assert outcome.text == "echoed"
    sent_back = api.requests[1].body["messages"][1]["content"][0]
    assert sent_back["type"] == "thinking" and sent_back["thinking"] == thinking["thinking"]
    assert len(sent_back["signature"]) == 32  # vLLM's uuid4().hex, not Anthropic's signature


async def test_a_server_without_its_tool_parser_is_named_as_the_fault(tmp_path: Path):
    script = [text_turn("x")]
    with MessagesAPIServer(script, model="claude-test", dialect="vllm", tool_parser=False) as api:
        session = make_session(api.url, [EchoTool()], tmp_path)
        outcome = await session.send("echo hi")
    assert [request.served for request in api.requests] == ["no_tool_parser"]
    assert outcome.stop == "error"
    assert "cannot call tools" in outcome.message and "--tool-call-parser" in outcome.message


def test_doctor_accepts_a_server_of_your_own_without_a_key():
    check = check_api_key(Settings(base_url="http://10.0.0.5:8000"))
    assert check.ok and "without one" in check.detail
    assert not check_api_key(Settings()).ok
