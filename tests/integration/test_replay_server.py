"""The real anthropic SDK against the local replay server: formats, retries and failures."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import pytest

from agent.standin.server import MessagesAPIServer

MODEL = "claude-test"
HISTORY = [{"role": "user", "content": "Check both hosts."}]
SYSTEM = "You are Scout."
TOOLS = [
    {
        "name": "ssh_exec",
        "description": "Run a command on a host.",
        "input_schema": {
            "type": "object",
            "properties": {"host": {"type": "string"}, "command": {"type": "string"}},
            "required": ["host", "command"],
        },
    }
]
TEXT = "Checking both hosts in one round before I plan anything."
TOOL_TURN = {
    "content": [
        {"type": "text", "text": TEXT},
        {
            "type": "tool_use",
            "id": "toolu_01A",
            "name": "ssh_exec",
            "input": {"host": "spark-head", "command": "nvidia-smi -q"},
        },
        {
            "type": "tool_use",
            "id": "toolu_01B",
            "name": "ssh_exec",
            "input": {"host": "spark-worker", "command": "cat /proc/meminfo"},
        },
    ],
    "stop_reason": "tool_use",
    "usage": {
        "input_tokens": 472,
        "output_tokens": 89,
        "cache_creation_input_tokens": 12,
        "cache_read_input_tokens": 300,
    },
}
DONE_TURN = {"content": [{"type": "text", "text": "All done."}], "stop_reason": "end_turn"}

ServerFactory = Callable[..., MessagesAPIServer]


@pytest.fixture
def serve() -> Iterator[ServerFactory]:
    started: list[MessagesAPIServer] = []

    def start(*script: dict[str, Any]) -> MessagesAPIServer:
        server = MessagesAPIServer(script, model=MODEL).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


def sdk(server: MessagesAPIServer, max_retries: int = 0) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key="test", base_url=server.url, max_retries=max_retries)


def blocks(message: Any) -> list[dict[str, Any]]:
    return [block.model_dump(exclude_none=True) for block in message.content]


async def stream_once(client: anthropic.AsyncAnthropic, texts: list[str]) -> Any:
    async with client.messages.stream(
        model=MODEL, max_tokens=1024, system=SYSTEM, messages=HISTORY, tools=TOOLS
    ) as stream:
        async for event in stream:
            if event.type == "text":
                texts.append(event.text)
        return await stream.get_final_message()


async def test_streamed_turn_arrives_whole_and_in_pieces(serve: ServerFactory) -> None:
    server = serve({"turn": TOOL_TURN})
    texts: list[str] = []
    async with sdk(server) as client:
        final = await stream_once(client, texts)

    assert blocks(final) == TOOL_TURN["content"]
    assert final.stop_reason == "tool_use"
    assert final.usage.model_dump(exclude_none=True) == TOOL_TURN["usage"]
    assert len(texts) > 1
    assert "".join(texts) == TEXT
    (request,) = server.requests
    assert request.path == "/v1/messages"
    assert request.served == "turn"
    assert request.headers["x-stainless-helper-method"] == "stream"
    assert request.body["stream"] is True
    assert request.body["messages"] == HISTORY
    assert request.body["tools"] == TOOLS
    assert request.body["system"] == SYSTEM
    assert server.remaining() == 0


async def test_thinking_block_streams_back_with_its_signature(serve: ServerFactory) -> None:
    thinking = {
        "type": "thinking",
        "thinking": "The head holds 98 GB already.",
        "signature": "sig1",
    }
    turn = {"content": [thinking, {"type": "text", "text": "Plan ready."}]}
    server = serve({"turn": turn})
    async with sdk(server) as client:
        final = await stream_once(client, [])

    assert blocks(final) == turn["content"]
    assert final.stop_reason == "end_turn"


async def test_non_streaming_create_returns_the_message(serve: ServerFactory) -> None:
    server = serve({"turn": TOOL_TURN})
    async with sdk(server) as client:
        message = await client.messages.create(model=MODEL, max_tokens=1024, messages=HISTORY)

    assert blocks(message) == TOOL_TURN["content"]
    assert message.stop_reason == "tool_use"
    assert message.model == MODEL
    assert "stream" not in server.requests[0].body


async def test_overloaded_then_turn_is_retried_by_the_sdk(serve: ServerFactory) -> None:
    overloaded = {"status": 529, "type": "overloaded_error", "message": "Overloaded"}
    server = serve({"http_error": {**overloaded, "retry_after_ms": 1}}, {"turn": DONE_TURN})
    async with sdk(server, max_retries=2) as client:
        final = await stream_once(client, [])

    assert blocks(final) == DONE_TURN["content"]
    assert [request.served for request in server.requests] == ["http_error", "turn"]
    retry_counts = [request.headers["x-stainless-retry-count"] for request in server.requests]
    assert retry_counts == ["0", "1"]


async def test_http_error_has_the_api_error_shape(serve: ServerFactory) -> None:
    server = serve({"http_error": {"status": 429, "message": "Slow down"}})
    async with sdk(server) as client:
        with pytest.raises(anthropic.RateLimitError) as caught:
            await client.messages.create(model=MODEL, max_tokens=16, messages=HISTORY)

    assert caught.value.body["error"] == {"type": "rate_limit_error", "message": "Slow down"}
    assert caught.value.body["request_id"] == server.requests[0].request_id
    assert caught.value.request_id == server.requests[0].request_id


async def test_should_retry_false_stops_sdk_retries(serve: ServerFactory) -> None:
    server = serve({"http_error": {"status": 529, "should_retry": False}}, {"turn": DONE_TURN})
    async with sdk(server, max_retries=2) as client:
        with pytest.raises(anthropic.OverloadedError):
            await stream_once(client, [])

    assert len(server.requests) == 1
    assert server.remaining() == 1


async def test_stream_error_raises_status_200_after_partial_text(serve: ServerFactory) -> None:
    failure = {"type": "overloaded_error", "message": "Overloaded", "after_blocks": 1}
    server = serve({"stream_error": {**failure, "partial": TOOL_TURN}})
    texts: list[str] = []
    async with sdk(server, max_retries=2) as client:
        with pytest.raises(anthropic.APIStatusError) as caught:
            await stream_once(client, texts)

    assert caught.value.status_code == 200
    assert caught.value.body["error"]["type"] == "overloaded_error"
    assert "".join(texts) == TEXT
    assert len(server.requests) == 1


async def test_drop_before_any_reply_is_a_connection_error(serve: ServerFactory) -> None:
    server = serve({"drop": {"after_events": 0}})
    async with sdk(server) as client:
        with pytest.raises(anthropic.APIConnectionError):
            await client.messages.create(model=MODEL, max_tokens=16, messages=HISTORY)


async def test_exhausted_script_answers_bad_request_and_keeps_recording(
    serve: ServerFactory,
) -> None:
    server = serve({"turn": DONE_TURN})
    async with sdk(server) as client:
        await client.messages.create(model=MODEL, max_tokens=16, messages=HISTORY)
        for _ in range(2):
            with pytest.raises(anthropic.BadRequestError, match="replay script exhausted after 1"):
                await stream_once(client, [])

    assert [request.served for request in server.requests] == ["turn", "exhausted", "exhausted"]


async def test_count_tokens_estimates_without_using_the_script(serve: ServerFactory) -> None:
    server = serve({"turn": DONE_TURN})
    async with sdk(server) as client:
        short = await client.messages.count_tokens(model=MODEL, messages=HISTORY)
        longer = await client.messages.count_tokens(model=MODEL, messages=HISTORY, tools=TOOLS)

    assert 0 < short.input_tokens < longer.input_tokens
    assert server.remaining() == 1
    assert server.requests[0].path == "/v1/messages/count_tokens"


async def test_unknown_path_is_not_found(serve: ServerFactory) -> None:
    server = serve()
    async with sdk(server) as client:
        with pytest.raises(anthropic.NotFoundError, match="no route for GET /v1/models"):
            await client.models.list()


async def test_request_missing_a_required_field_is_rejected(serve: ServerFactory) -> None:
    server = serve({"turn": DONE_TURN})
    async with sdk(server) as client:
        with pytest.raises(anthropic.BadRequestError, match="max_tokens: Field required"):
            await client.post(
                "/v1/messages", body={"model": MODEL, "messages": HISTORY}, cast_to=object
            )

    assert server.remaining() == 1


def test_malformed_script_item_names_its_position() -> None:
    with pytest.raises(ValueError, match="item 2 must be a dict with exactly one key"):
        MessagesAPIServer([{"turn": DONE_TURN}, {"turn": DONE_TURN, "drop": {"after_events": 1}}])


def test_url_before_start_says_what_to_do() -> None:
    with pytest.raises(RuntimeError, match="call start"):
        _ = MessagesAPIServer([]).url
