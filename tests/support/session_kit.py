"""Building sessions for tests: the real SDK against the local replay server, or any client.

`text_turn` and `tool_turn` write script items that both the replay server and ScriptedClient read.
Their usage is the estimate of the request they answer unless a test gives usage on purpose
(`text_turn("…", input_tokens=1000, output_tokens=200)`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tenacity import wait_none

from agent.loop.model_client import AnthropicClient
from agent.loop.model_turn import ModelClient
from agent.loop.recorder import SessionListener
from agent.loop.session import Budgets, Session
from agent.runtime.builder import build_session, open_recorder
from agent.safety.redact import Redactor
from tools.base import Tool, ToolContext


def sdk_client(url: str, *, max_retries: int = 0) -> AnthropicClient:
    return AnthropicClient(
        api_key="test-key-not-secret", base_url=url, max_retries=max_retries, retry_wait=wait_none()
    )


def make_session(url: str, tools: list[Tool], tmp_path: Path, **kwargs: Any) -> Session:
    """A session whose model is the real SDK talking to the replay server at `url`."""
    return session_with(sdk_client(url), tools, tmp_path, **kwargs)


def session_with(
    client: ModelClient,
    tools: list[Tool],
    tmp_path: Path,
    *,
    budgets: Budgets | None = None,
    redactor: Redactor | None = None,
    listeners: list[SessionListener] | None = None,
    **kwargs: Any,
) -> Session:
    """A test session around any model client (e.g. ScriptedClient); transcript in tmp_path."""
    redactor = redactor or Redactor()
    return build_session(
        open_recorder(tmp_path / "session.jsonl", redactor, listeners=listeners or ()),
        client=client,
        tools=tools,
        context=ToolContext(spill_dir=tmp_path / "spill"),
        system_prompt="You are a test agent.",
        model="claude-test",
        redactor=redactor,
        budgets=budgets,
        **kwargs,
    )


def text_turn(text: str, stop_reason: str = "end_turn", **usage: int) -> dict[str, Any]:
    content = [{"type": "text", "text": text}] if text else []
    turn: dict[str, Any] = {"content": content, "stop_reason": stop_reason}
    if usage:
        turn["usage"] = usage
    return {"turn": turn}


def tool_turn(
    calls: list[tuple[str, str, dict[str, Any]]], text: str = "", stop_reason: str = "tool_use"
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "tool_use", "id": call_id, "name": name, "input": params}
        for call_id, name, params in calls
    ]
    return {"turn": {"content": content, "stop_reason": stop_reason}}
