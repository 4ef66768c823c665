"""One model turn as data, and what a model client is: no SDK here, so faces that never call a
model (recon, doctor, replay, the demo) start without importing it.

`AnthropicClient` (agent/loop/model_client.py) streams turns through the real SDK; the replay and
scripted clients answer from recordings. The request's cache breakpoints are placed here, so the
replay server and the token estimate see the same request the SDK sends.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from agent.loop import history

TextSink = Callable[[str], None]
RetrySink = Callable[[int, str], None]


@dataclass
class TurnRequest:
    """Everything one model call needs; `system` and `tools` form the cached static prefix."""

    model: str
    max_tokens: int
    system: str
    tools: list[dict[str, Any]]
    messages: list[dict[str, Any]]

    def digest(self) -> str:
        body = json.dumps(
            {"model": self.model, "system": self.system, "tools": self.tools, "m": self.messages},
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(body.encode()).hexdigest()[:16]


UsageSource = Literal["api", "estimate"]


@dataclass
class AssistantTurn:
    """One reply; `usage_source` says whether the API reported the usage or it was counted."""

    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: dict[str, Any] = field(default_factory=dict)
    model: str = ""
    request_id: str | None = None
    usage_source: UsageSource = "api"

    def tool_uses(self) -> list[dict[str, Any]]:
        return [block for block in self.content if block.get("type") == "tool_use"]

    def text(self) -> str:
        return "".join(block.get("text", "") for block in self.content if block["type"] == "text")


class ModelError(Exception):
    """A model call failed in a way retries did not fix; `str()` says what to do.

    `kind` names the failures the session can act on: "prompt_too_long" (compact, then retry).
    """

    def __init__(self, message: str, kind: str = "") -> None:
        super().__init__(message)
        self.kind = kind


class ModelClient(Protocol):
    async def stream(
        self, request: TurnRequest, on_text: TextSink, on_retry: RetrySink | None = None
    ) -> AssistantTurn: ...


class NoModel:
    """The client of a session that calls its tools directly (`scout exec`, `scout mcp` and its
    replay): no model is asked there, so a session that tried would be a bug."""

    def __init__(self, who: str) -> None:
        self.who = who

    async def stream(
        self, request: TurnRequest, on_text: TextSink, on_retry: RetrySink | None = None
    ) -> AssistantTurn:
        raise RuntimeError(f"{self.who} asks no model")


def cached_request_params(request: TurnRequest) -> dict[str, Any]:
    """The request with its cache breakpoints (at most the four the API allows).

    The API finds a cached prefix by looking back only about 20 blocks from each breakpoint, and
    one turn of 16 parallel calls adds 33 blocks (text, 16 tool_use, 16 tool_result). So:
    1. the system prompt: the static prefix (tools and system prompt);
    2. the block before the briefing, where compaction last stopped: a compaction rewrites only
       what follows it, so the next one reads everything older from the cache;
    3. the end of the message the previous request ended with: read back exactly, however many
       blocks the turn added;
    4. the newest message's last block: what the next turn reads.
    """
    system = [{"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}]
    messages = copy.deepcopy(request.messages)
    for content in _breakpoint_blocks(messages):
        content["cache_control"] = {"type": "ephemeral"}
    return {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "system": system,
        "tools": request.tools,
        "messages": messages,
    }


def _breakpoint_blocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks to mark: before the briefing, the previous request's end, the newest."""
    for message in messages:
        if isinstance(message.get("content"), str):
            message["content"] = [{"type": "text", "text": message["content"]}]
    ends: list[tuple[int, int]] = []
    where = history.briefing_position(messages)
    if where is not None and where[1] > 0:
        ends.append((where[0], where[1] - 1))
    replies = [i for i, message in enumerate(messages) if message.get("role") == "assistant"]
    if replies and replies[-1] > 0:
        previous = replies[-1] - 1
        ends.append((previous, len(messages[previous]["content"]) - 1))
    if messages:
        ends.append((len(messages) - 1, len(messages[-1]["content"]) - 1))
    marked = sorted({end for end in ends if end[1] >= 0})
    return [messages[index]["content"][position] for index, position in marked]
