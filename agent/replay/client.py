"""Driving a session from a recorded transcript, and noticing when the run drifts from it.

`ReplayClient` answers each model call with the next recorded response. Before answering it
compares what the agent is about to send (the newest message: the user's text, or the tool
results with their ids and error flags; and how many old results the history holds compacted)
with what was sent when the session was recorded. Any difference is drift: the agent ran other
calls, they failed differently, or it compacted its history differently.

A replay calls no API, so its usage is counted from the request it actually built (marked as an
estimate, agent/loop/token_estimate.py), not copied from the recording. The request must still
be one the API would accept (agent/loop/request_rules.py); if not, the turn fails as it would
live.
"""

from __future__ import annotations

import asyncio
import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.loop.compaction import is_stub
from agent.loop.events import ErrorEvent, Event, ModelRequest, ModelResponse
from agent.loop.history import result_blocks, text_of
from agent.loop.model_turn import (
    AssistantTurn,
    ModelError,
    RetrySink,
    TextSink,
    TurnRequest,
    cached_request_params,
)
from agent.loop.request_rules import check_request
from agent.loop.token_estimate import PromptCacheModel, content_tokens


@dataclass
class Drift:
    turn: int
    diff: str


@dataclass
class RecordedTurn:
    """One recorded model call: its response, or the error it failed with (a stream cut)."""

    expected_last: list[dict[str, Any]]
    response: ModelResponse | None
    compacted_results: int = 0
    error: str | None = None


def recorded_turns(events: list[Event]) -> list[RecordedTurn]:
    turns: list[RecordedTurn] = []
    request: ModelRequest | None = None
    for event in events:
        if isinstance(event, ModelRequest):
            request = event
        elif isinstance(event, ModelResponse | ErrorEvent) and request is not None:
            if isinstance(event, ErrorEvent) and event.kind != "model":
                continue
            expected, compacted = request.last_user, request.compacted_results
            if isinstance(event, ErrorEvent):  # the call failed: the replay fails it there too
                turns.append(RecordedTurn(expected, None, compacted, error=event.message))
            else:
                turns.append(RecordedTurn(expected, event, compacted))
            request = None
        elif isinstance(event, ModelResponse):
            turns.append(RecordedTurn([], event))
    return turns


def compacted_lines(request: TurnRequest) -> list[str]:
    """How many results the history holds as compaction stubs, as a line to compare."""
    count = sum(is_stub(text_of(block)) for block in result_blocks(request.messages).values())
    return [f"compacted results {count}"] if count else []


def comparable(blocks: list[dict[str, Any]] | str) -> list[str]:
    """What must match between runs: texts, and which calls answered with which error flag."""
    if isinstance(blocks, str):
        blocks = [{"type": "text", "text": blocks}]
    lines = []
    for block in blocks:
        kind = block.get("type")
        if kind == "tool_result":
            status = "error" if block.get("is_error") else "ok"
            lines.append(f"tool_result {block.get('tool_use_id')} {status}")
        elif kind == "text":
            lines.append(f"text {json.dumps(block.get('text', ''))}")
        elif kind == "tool_use":
            lines.append(f"tool_use {block.get('name')} {json.dumps(block.get('input'))}")
        else:
            lines.append(str(kind))
    return lines


class RecordingEnded(ModelError):
    """The run asked for a model turn the recording cannot give: it ran out, or the run left it."""


class ReplayClient:
    """A ModelClient that plays back recorded turns; `pace_s` paces text like a live stream.

    With `stop_on_drift`, a request that differs from the recorded one ends the replay at once
    (RecordingEnded) instead of answering with a turn that was recorded for another situation.
    `halted` is asked before each turn: a reason (not None) ends the replay there with a
    ModelError saying it, as when the recording's approvals stopped matching the run.
    """

    def __init__(
        self,
        events: list[Event],
        *,
        pace_s: float = 0.0,
        stop_on_drift: bool = False,
        halted: Callable[[], str | None] = lambda: None,
    ) -> None:
        self._turns = recorded_turns(events)
        self._next = 0
        self.pace_s = pace_s
        self.stop_on_drift = stop_on_drift
        self.drift: list[Drift] = []
        self._cache = PromptCacheModel()
        self.ran_out = False
        self._halted = halted

    @property
    def remaining(self) -> int:
        return len(self._turns) - self._next

    @property
    def played(self) -> int:
        return self._next

    @property
    def recorded(self) -> int:
        return len(self._turns)

    async def stream(
        self, request: TurnRequest, on_text: TextSink, on_retry: RetrySink | None = None
    ) -> AssistantTurn:
        reason = self._halted()
        if reason is not None:
            raise ModelError(f"The replay stopped: {reason}.")
        if self._next >= len(self._turns):
            self.ran_out = True
            raise RecordingEnded(
                f"The recording ends after {_turns(len(self._turns))}, but this run asked for "
                "another: the recording was cut short (or the run went further than it did)."
            )
        body = cached_request_params(request)
        problem = check_request(body)
        if problem is not None:
            raise ModelError(
                f"The API would refuse this request ({problem.status} {problem.type}): "
                f"{problem.message}"
            )
        recorded = self._turns[self._next]
        self._next += 1
        self._check_drift(self._next, request, recorded)
        if self.stop_on_drift and self.drift:
            raise RecordingEnded(
                f"This run left the recording before model turn {self._next}: the results it "
                "would answer differ from the recorded ones, so the replay stops here."
            )
        response = recorded.response
        if response is None:
            raise ModelError(recorded.error or "the recorded model call failed")
        for block in response.content:
            if block.get("type") == "text":
                await self._emit_text(block.get("text", ""), on_text)
        usage = self._cache.usage(body)
        usage["output_tokens"] = content_tokens(response.content)
        return AssistantTurn(
            content=response.content,
            stop_reason=response.stop_reason,
            usage=usage,
            model=response.model,
            request_id=response.request_id,
            usage_source="estimate",
        )

    def _check_drift(self, turn: int, request: TurnRequest, recorded: RecordedTurn) -> None:
        actual = request.messages[-1]["content"] if request.messages else []
        want = comparable(recorded.expected_last)
        if recorded.compacted_results:
            want.append(f"compacted results {recorded.compacted_results}")
        got = comparable(actual) + compacted_lines(request)
        if want != got:
            diff = "\n".join(
                difflib.unified_diff(want, got, "recorded", "this run", lineterm="", n=1)
            )
            self.drift.append(Drift(turn, diff))

    async def _emit_text(self, text: str, on_text: TextSink) -> None:
        if self.pace_s <= 0:
            on_text(text)
            return
        words = text.split(" ")
        for index, word in enumerate(words):
            on_text(word + (" " if index < len(words) - 1 else ""))
            await asyncio.sleep(self.pace_s)


def _turns(count: int) -> str:
    return f"{count} model turn" + ("" if count == 1 else "s")


@dataclass
class ReplayReport:
    """How a replay went; `approval_drift` lists approvals the recording could not answer."""

    turns_played: int
    turns_recorded: int
    drift: list[Drift] = field(default_factory=list)
    ran_out: bool = False  # the run asked for a turn past the recording's end
    approval_drift: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return (
            not self.drift
            and not self.approval_drift
            and not self.ran_out
            and self.turns_played == self.turns_recorded
        )

    def describe(self) -> str:
        if self.clean:
            return f"no drift: {_turns(self.turns_played)} replayed as recorded"
        if self.ran_out and not self.drift and not self.approval_drift:
            return (
                f"the recording ended early: after its {_turns(self.turns_recorded)} the run "
                "still expected an answer, so this transcript does not hold a whole session"
            )
        lines = [f"replayed {self.turns_played} of {self.turns_recorded} recorded model turns"]
        for problem in self.approval_drift:
            lines.append(f"drift: {problem}")
        for drift in self.drift:
            lines.append(f"drift at model turn {drift.turn}:\n{drift.diff}")
        return "\n".join(lines)
