"""`ScriptedClient`: a ModelClient that answers from a script, in process, without the SDK.

For tests whose subject is not the model API (the simulator, the world model, tools driven by a
session): each call takes the next scripted assistant turn and records the request it got. The
script uses the replay server's item shape (`{"turn": {"content": [...], "stop_reason": ...,
"usage": {...}}}`, what tests/support's `text_turn`/`tool_turn` build), or `AssistantTurn`s, or an
exception to raise in place of a turn (e.g. `ModelError`). Tests of the SDK's own behaviour
(streaming, retries, HTTP errors) use agent/standin/server.py with the real SDK instead.

It is as strict as the replay server: a request the Messages API would refuse fails the test
(agent/loop/request_rules.py). A turn without scripted usage reports the estimate of the request
it answers, as the server does.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Sequence
from typing import Any

from agent.loop.model_turn import (
    AssistantTurn,
    RetrySink,
    TextSink,
    TurnRequest,
    cached_request_params,
)
from agent.loop.request_rules import check_request
from agent.loop.token_estimate import PromptCacheModel, content_tokens

ScriptEntry = AssistantTurn | BaseException | dict[str, Any]


class ScriptExhausted(AssertionError):
    """The session asked for more turns than the script has: the test's story went further.

    An AssertionError on purpose: the session handles `ModelError` as a failed call, so this one
    is not swallowed; it fails the test at the call that went past the script.
    """


class RequestRefused(AssertionError):
    """The session built a request the Messages API would refuse: a bug in Scout, not the test."""


class ScriptedClient:
    """Answers each `stream()` with the next scripted turn; `requests` holds what it was asked."""

    def __init__(self, script: Sequence[ScriptEntry], *, model: str = "claude-test") -> None:
        self.model = model
        self.requests: list[TurnRequest] = []
        self._script = deque(_entry(item, n, model) for n, item in enumerate(script, 1))
        self._length = len(self._script)
        self._cache = PromptCacheModel()

    @property
    def remaining(self) -> int:
        return len(self._script)

    async def stream(
        self, request: TurnRequest, on_text: TextSink, on_retry: RetrySink | None = None
    ) -> AssistantTurn:
        self.requests.append(copy.deepcopy(request))
        body = cached_request_params(request)
        problem = check_request(body)
        if problem is not None:
            number = len(self.requests)
            raise RequestRefused(f"the API would refuse request {number}: {problem.message}")
        if not self._script:
            raise ScriptExhausted(
                f"the script has {self._length} turns and the session asked for turn "
                f"{len(self.requests)}; its newest message was: {_newest(request)}"
            )
        entry = self._script.popleft()
        if isinstance(entry, BaseException):
            raise entry
        for block in entry.content:
            if block.get("type") == "text" and block.get("text"):
                on_text(block["text"])
        turn = copy.deepcopy(entry)
        if not turn.usage:
            turn.usage = self._cache.usage(body)
            turn.usage["output_tokens"] = content_tokens(turn.content)
            turn.usage_source = "estimate"
        return turn

    def assert_done(self) -> None:
        """Fail when scripted turns were never asked for: the session stopped early."""
        if self._script:
            raise AssertionError(
                f"{len(self._script)} of {self._length} scripted turns were never asked for "
                f"(the session made {len(self.requests)} model calls)"
            )


def _entry(item: ScriptEntry, position: int, model: str) -> AssistantTurn | BaseException:
    if isinstance(item, AssistantTurn | BaseException):
        return item
    turn = item.get("turn") if isinstance(item, dict) and len(item) == 1 else None
    if not isinstance(turn, dict) or not isinstance(turn.get("content"), list):
        raise ValueError(
            f"script item {position} must be an AssistantTurn, an exception, or "
            f"{{'turn': {{'content': [...], 'stop_reason': ...}}}}; got {item!r:.120}"
        )
    return AssistantTurn(
        content=turn["content"],
        stop_reason=turn.get("stop_reason", "end_turn"),
        usage=turn.get("usage") or {},
        model=model,
        request_id=f"req_scripted{position:06d}",
    )


def _newest(request: TurnRequest) -> str:
    if not request.messages:
        return "(no messages)"
    return repr(request.messages[-1].get("content"))[:200]
