"""What Scout's model client does when the API connection fails, whatever SDK release is installed.

SDK releases differ in what a broken stream raises (2.15 lets `httpx2.RemoteProtocolError` through,
2.17 wraps it as `anthropic.APIConnectionError`), so these tests assert what Scout does with it:
the retry it announces, the requests the server saw, the message the user reads.
"""

from __future__ import annotations

import pytest
from tenacity import wait_none

from agent.loop.model_client import AnthropicClient
from agent.loop.model_turn import ModelError, TurnRequest
from agent.standin.server import MessagesAPIServer

REQUEST = TurnRequest(
    model="claude-test",
    max_tokens=256,
    system="You are Scout.",
    tools=[],
    messages=[{"role": "user", "content": "Check both hosts."}],
)
DONE = {"turn": {"content": [{"type": "text", "text": "All done."}], "stop_reason": "end_turn"}}


def client(url: str) -> AnthropicClient:
    return AnthropicClient(api_key="test", base_url=url, max_retries=2, retry_wait=wait_none())


@pytest.mark.parametrize("after_events", [0, 3])
async def test_a_dropped_stream_is_retried_once_saying_it_dropped_mid_answer(
    after_events: int,
) -> None:
    retries: list[tuple[int, str]] = []
    with MessagesAPIServer([{"drop": {"after_events": after_events}}, DONE]) as server:
        model = client(server.url)
        turn = await model.stream(REQUEST, lambda _: None, lambda n, why: retries.append((n, why)))
        await model.close()
        served = [request.served for request in server.requests]

    assert turn.text() == "All done."
    assert retries == [(1, "the connection to the model API dropped mid-answer")]
    assert served == ["drop", "turn"]  # the SDK did not retry the drop itself


async def test_a_stream_that_keeps_dropping_ends_in_one_message_saying_what_to_do() -> None:
    retries: list[tuple[int, str]] = []
    with MessagesAPIServer([{"drop": {"after_events": 3}}] * 3) as server:
        model = client(server.url)
        with pytest.raises(ModelError) as failed:
            await model.stream(REQUEST, lambda _: None, lambda n, why: retries.append((n, why)))
        await model.close()

    assert [n for n, _ in retries] == [1, 2]
    assert str(failed.value) == (
        "Lost the connection to the model API and retries did not help; check the network "
        "or ANTHROPIC_BASE_URL, then try again."
    )


async def test_an_api_that_cannot_be_reached_is_named_and_not_called_a_drop(
    closed_port: int,
) -> None:
    port = closed_port
    retries: list[tuple[int, str]] = []
    model = AnthropicClient(
        api_key="test", base_url=f"http://127.0.0.1:{port}", max_retries=0, retry_wait=wait_none()
    )
    with pytest.raises(ModelError) as failed:
        await model.stream(REQUEST, lambda _: None, lambda n, why: retries.append((n, why)))
    await model.close()

    assert retries == []  # nothing was answered, so nothing dropped mid-answer
    where = f"http://127.0.0.1:{port}"
    assert str(failed.value).startswith(
        f"Could not reach the model API at {where} (connection refused), even after retries"
    )
