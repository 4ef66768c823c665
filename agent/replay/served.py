"""A recording served over HTTP: its model turns as a replay server's script, read back through
the real SDK, so a whole story exercises a server's wire format (the vLLM dialect's included).

`ServedReplay` checks every request against the recording as `ReplayClient` does (drift), then
takes the answer from the server: the turn the session acts on is what the SDK parsed from that
server's stream, not the recorded dict. Where the parsed turn differs from the recorded one, the
wire changed what the model said, and `garbled` names the turn.
"""

from __future__ import annotations

from typing import Any

from agent.loop.events import Event
from agent.loop.model_turn import AssistantTurn, ModelClient, RetrySink, TextSink, TurnRequest
from agent.replay.client import ReplayClient, recorded_turns


def recorded_script(events: list[Event]) -> list[dict[str, Any]]:
    """The recording's answered model turns, in order, as replay-server script items.

    A turn that failed in the recording is left out: the replay fails it before asking.
    """
    return [
        {"turn": {"content": turn.response.content, "stop_reason": turn.response.stop_reason}}
        for turn in recorded_turns(events)
        if turn.response is not None
    ]


class ServedReplay:
    """A ModelClient: the recording decides drift, `served` (an SDK client) gives the answer."""

    def __init__(self, replay: ReplayClient, served: ModelClient) -> None:
        self.replay = replay
        self.served = served
        self.garbled: list[int] = []

    async def stream(
        self, request: TurnRequest, on_text: TextSink, on_retry: RetrySink | None = None
    ) -> AssistantTurn:
        recorded = await self.replay.stream(request, lambda _text: None)
        answer = await self.served.stream(request, on_text, on_retry)
        if answer.content != recorded.content or answer.stop_reason != recorded.stop_reason:
            self.garbled.append(self.replay.played)
        return answer
