"""What the Messages API refuses, checked as it checks: the first problem, in the API's own words.

The local Messages-API server (agent/standin/server.py) runs every request through
`check_request`, and so does ScriptedClient, so a recording or a test fails exactly where the
real service would answer `400 invalid_request_error`. The messages follow the wording of the
API's replies (the `messages.N: ...` paths included); the limits are the documented ones: tool
names `^[a-zA-Z0-9_-]{1,64}$`, at most four `cache_control` breakpoints, `max_tokens` within
the model's output limit, the prompt within its context window (counted by
agent/loop/token_estimate.py, so the window is judged on an estimate).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agent.loop.token_estimate import estimate_input_tokens

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_BREAKPOINTS = 4
REQUIRED_FIELDS = ("model", "max_tokens", "messages")


@dataclass(frozen=True)
class ModelLimits:
    max_output_tokens: int
    context_window: int


# Output limits and context windows from the models overview; unknown names (claude-test, ...)
# get the common Sonnet 4.5 figures.
_LIMITS = {
    "opus-4-6": ModelLimits(128_000, 1_000_000),
    "opus-4-5": ModelLimits(64_000, 200_000),
    "opus-4-1": ModelLimits(32_000, 200_000),
    "opus-4": ModelLimits(32_000, 200_000),
    "sonnet": ModelLimits(64_000, 200_000),
    "haiku": ModelLimits(64_000, 200_000),
}
DEFAULT_LIMITS = ModelLimits(64_000, 200_000)


def limits_for(model: str) -> ModelLimits:
    for family, limits in _LIMITS.items():
        if family in model:
            return limits
    return DEFAULT_LIMITS


@dataclass(frozen=True)
class RequestProblem:
    """Why the API would refuse a request: its HTTP status, error type and message."""

    status: int
    type: str
    message: str


def check_request(body: Any, *, counting: bool = False) -> RequestProblem | None:
    """The first rule `body` breaks, or None. `counting`: a count_tokens body (no max_tokens)."""
    if not isinstance(body, dict):
        return _invalid("request body is not a JSON object")
    for problem in _checks(body, counting):
        if problem is not None:
            return _invalid(problem) if isinstance(problem, str) else problem
    return None


def _checks(body: dict[str, Any], counting: bool) -> Iterator[str | RequestProblem | None]:
    required = [name for name in REQUIRED_FIELDS if not (counting and name == "max_tokens")]
    yield next((f"{name}: Field required" for name in required if name not in body), None)
    limits = limits_for(str(body["model"]))
    if not counting:
        yield _max_tokens(body["max_tokens"], str(body["model"]), limits)
    yield _tools(body.get("tools"))
    yield _system(body.get("system"))
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        yield "messages: at least one message is required"
        return
    yield _message_shapes(messages)
    yield _unique_tool_use_ids(messages)
    yield _results_follow_uses(messages)
    breakpoints = _count_breakpoints(body)
    if breakpoints > MAX_BREAKPOINTS:
        yield (
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {breakpoints}."
        )
    prompt = estimate_input_tokens(body)
    if prompt > limits.context_window:
        yield f"prompt is too long: {prompt} tokens > {limits.context_window} maximum"


def _invalid(message: str) -> RequestProblem:
    return RequestProblem(400, "invalid_request_error", message)


def _max_tokens(value: Any, model: str, limits: ModelLimits) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool):
        return "max_tokens: Input should be a valid integer"
    if value < 1:
        return "max_tokens: Input should be greater than or equal to 1"
    if value > limits.max_output_tokens:
        return (
            f"max_tokens: {value} > {limits.max_output_tokens}, which is the maximum allowed "
            f"number of output tokens for {model}"
        )
    return None


def _tools(tools: Any) -> str | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "tools: Input should be a valid list"
    names = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            return f"tools.{index}: Input should be a valid dictionary"
        if "type" in tool and tool.get("type") != "custom":
            continue  # server tools (web_search, ...) carry their own shapes
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            return f"tools.{index}.custom.name: String should match pattern '{TOOL_NAME.pattern}'"
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            return f"tools.{index}.custom.input_schema: Field required"
        if schema.get("type") != "object":
            return f"tools.{index}.custom.input_schema.type: Input should be 'object'"
        names.append(name)
    if len(set(names)) != len(names):
        return "tools: Tool names must be unique."
    return None


def _system(system: Any) -> str | None:
    if system is None or isinstance(system, str):
        return None
    if not isinstance(system, list):
        return "system: Input should be a valid string or list of text blocks"
    for block in system:
        if not isinstance(block, dict) or block.get("type") != "text":
            return "system: Input should be a valid list of text blocks"
        problem = _text_problem(block.get("text"), "system")
        if problem:
            return problem
    return None


def _text_problem(text: Any, where: str) -> str | None:
    if not isinstance(text, str) or not text:
        return f"{where}: text content blocks must be non-empty"
    if not text.strip():
        return f"{where}: text content blocks must contain non-whitespace text"
    return None


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def _message_shapes(messages: list[Any]) -> str | None:
    last = len(messages) - 1
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            return f"messages.{index}: Input should be a valid dictionary"
        if message.get("role") not in ("user", "assistant"):
            return f"messages.{index}.role: Input should be 'user' or 'assistant'"
        content = message.get("content")
        if not isinstance(content, str | list):
            return f"messages.{index}.content: Input should be a valid string or list"
        final_assistant = index == last and message["role"] == "assistant"
        if not content and not final_assistant:
            return (
                f"messages.{index}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        for position, block in enumerate(_blocks(message)):
            kind = block.get("type")
            if not isinstance(kind, str):
                return f"messages.{index}.content.{position}.type: Field required"
            if kind == "text":
                problem = _text_problem(block.get("text"), "messages")
                if problem:
                    return problem
            if kind == "tool_use" and message["role"] != "assistant":
                return f"messages.{index}.content.{position}: tool_use blocks need role assistant"
            if kind == "tool_result" and message["role"] != "user":
                return f"messages.{index}.content.{position}: tool_result blocks need role user"
    return None


def _unique_tool_use_ids(messages: list[dict[str, Any]]) -> str | None:
    seen: set[str] = set()
    for index, message in enumerate(messages):
        for position, block in enumerate(_blocks(message)):
            if block.get("type") != "tool_use":
                continue
            if block.get("id") in seen:
                return f"messages.{index}.content.{position}: `tool_use` ids must be unique"
            seen.add(block.get("id"))
    return None


def _results_follow_uses(messages: list[dict[str, Any]]) -> str | None:
    """Each tool_use answered at the start of the next message; no tool_result without its use."""
    for index, message in enumerate(messages):
        blocks = _blocks(message)
        if message["role"] == "user":
            previous = _blocks(messages[index - 1]) if index else []
            asked = {b.get("id") for b in previous if b.get("type") == "tool_use"}
            if index and messages[index - 1]["role"] != "assistant":
                asked = set()
            for position, block in enumerate(blocks):
                if block.get("type") == "tool_result" and block.get("tool_use_id") not in asked:
                    return (
                        f"messages.{index}.content.{position}: unexpected `tool_use_id` found in "
                        f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` "
                        "block must have a corresponding `tool_use` block in the previous message."
                    )
            continue
        uses = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
        if not uses:
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        answered: set[Any] = set()
        if following is not None and following["role"] == "user":
            for block in _blocks(following):
                if block.get("type") != "tool_result":
                    break
                answered.add(block.get("tool_use_id"))
        missing = [str(use) for use in uses if use not in answered]
        if missing:
            return (
                f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )
    return None


def _count_breakpoints(body: dict[str, Any]) -> int:
    """Markers on tools, system blocks, message blocks and blocks inside a tool_result."""
    system = body.get("system")
    blocks: list[Any] = list(body.get("tools") or [])
    blocks += system if isinstance(system, list) else []
    for message in body["messages"]:
        for block in _blocks(message):
            blocks.append(block)
            inner = block.get("content")
            if block.get("type") == "tool_result" and isinstance(inner, list):
                blocks += inner
    return sum(isinstance(block, dict) and "cache_control" in block for block in blocks)
