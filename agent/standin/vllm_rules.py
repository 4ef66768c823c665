"""What vLLM's Messages API refuses, and how it says so (the replay server's vLLM dialect).

Read in vLLM's source (github.com/vllm-project/vllm): `entrypoints/anthropic/protocol.py` at
00589e563e77 (the request model), `api_router.py` at 01540b75e3b1 (routes, error translation),
`serve/middleware/authenticate.py` at baaf6e9c171b, `serve/exception_handling/handlers/
validation.py` at 4da14a5cf11a, `serve/engine/serving.py` at 4b5c627c23e6 (`_check_model`).

In order, as a request meets them:
1. `--api-key`: every path under /v1 needs `Authorization: Bearer KEY`; `x-api-key`, the header
   the Anthropic SDK sends for an API key, is not read. 401 `{"error": "Unauthorized"}`.
2. Routes: POST /v1/messages and /v1/messages/count_tokens; anything else is FastAPI's
   404 `{"detail": "Not Found"}` (405 `Method Not Allowed` for a known path).
3. The body against pydantic models that ignore unknown fields (`cache_control`, `thinking`,
   `metadata`, `tool_choice.disable_parallel_tool_use` pass silently) but type the known ones:
   400 in the OpenAI error shape `{"error": {message, type: "Bad Request", param, code: 400}}`.
4. The model must be one the server serves (`--served-model-name`): 404 in the Messages-API
   shape, type `NotFoundError`, "The model `X` does not exist."
5. Tools with `tool_choice` auto (what the translation sets when none is given) need the server
   started with `--enable-auto-tool-choice --tool-call-parser P`: 400 `BadRequestError`
   (`chat_completion/serving.py`; the same text tools/deploy/proof/generation_checks.py reads).
6. The prompt must leave room for `max_tokens` within `--max-model-len`: 400 `BadRequestError`,
   "You passed N input tokens and requested M output tokens. However, the model's context length
   is only L tokens, …" (`renderers/params.py` `_token_len_check` at 017638d70159).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agent.loop.token_estimate import estimate_input_tokens
from agent.standin.wire import COUNT_TOKENS_PATH, MESSAGES_PATH

BLOCK_TYPES = (
    "text",
    "image",
    "tool_use",
    "tool_result",
    "tool_reference",
    "thinking",
    "redacted_thinking",
)
NO_PARSER = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
ROLES = {"user": "user", "assistant": "assistant", "system": "system", "ctx": "user", "msg": "user"}
TOOL_CHOICES = ("auto", "any", "tool", "none")


@dataclass(frozen=True)
class Refusal:
    """An answer vLLM gives before any generation: status and its exact body."""

    status: int
    payload: dict[str, Any]
    served: str


def authorized(headers: dict[str, str], api_key: str | None) -> bool:
    """vLLM's AuthenticationMiddleware: the Bearer token, compared by digest, nothing else."""
    if api_key is None:
        return True
    scheme, _, token = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    given = hashlib.sha256(token.encode()).digest()
    return secrets.compare_digest(given, hashlib.sha256(api_key.encode()).digest())


@dataclass(frozen=True)
class ServeOptions:
    """What `vllm serve` was started with that decides a refusal."""

    served_model: str
    api_key: str | None = None  # --api-key
    max_model_len: int | None = None  # --max-model-len
    tool_parser: bool = True  # --enable-auto-tool-choice --tool-call-parser P


def refuse(
    method: str, path: str, headers: dict[str, str], body: Any, options: ServeOptions
) -> Refusal | None:
    """The refusal vLLM answers this request with, or None when it would generate."""
    served_model, max_model_len = options.served_model, options.max_model_len
    if path.startswith("/v1") and not authorized(headers, options.api_key):
        return Refusal(401, {"error": "Unauthorized"}, "unauthorized")
    if path not in (MESSAGES_PATH, COUNT_TOKENS_PATH):
        return Refusal(404, {"detail": "Not Found"}, "not_found")
    if method != "POST":
        return Refusal(405, {"detail": "Method Not Allowed"}, "not_found")
    problem = next(validation_errors(body, counting=path == COUNT_TOKENS_PATH), None)
    if problem is not None:
        return Refusal(400, bad_request(*problem), "invalid_request")
    if body["model"] != served_model:
        text = f"The model `{body['model']}` does not exist."
        error = {"type": "NotFoundError", "message": text}
        return Refusal(404, {"type": "error", "error": error}, "model_not_found")
    choice = (body.get("tool_choice") or {}).get("type", "auto")
    if body.get("tools") and choice == "auto" and not options.tool_parser:
        error = {"type": "BadRequestError", "message": NO_PARSER}
        return Refusal(400, {"type": "error", "error": error}, "no_tool_parser")
    if max_model_len is not None and path == MESSAGES_PATH:
        return _context_overflow(body, max_model_len)
    return None


def _context_overflow(body: dict[str, Any], max_model_len: int) -> Refusal | None:
    tokens, wanted = estimate_input_tokens(body), body["max_tokens"]
    room = max_model_len - wanted
    if tokens <= room:
        return None
    text = (
        f"You passed {tokens} input tokens and requested {wanted} output tokens. However, the "
        f"model's context length is only {max_model_len} tokens, resulting in a maximum input "
        f"length of {room} tokens. Please reduce the length of the input prompt."
    )
    error = {"type": "BadRequestError", "message": text}
    return Refusal(400, {"type": "error", "error": error}, "context_overflow")


def bad_request(param: str, kind: str, msg: str) -> dict[str, Any]:
    """The validation handler's body: OpenAI's error shape, not the Messages API's."""
    detail = {"type": kind, "loc": param, "msg": msg}
    message = f"1 validation error:\n  {detail}"
    return {"error": {"message": message, "type": "Bad Request", "param": param, "code": 400}}


Problem = tuple[str, str, str]  # param (dotted loc), pydantic error type, message


def validation_errors(body: Any, *, counting: bool) -> Iterator[Problem]:
    """The pydantic errors of AnthropicMessagesRequest (or the count_tokens request) for `body`."""
    if not isinstance(body, dict):
        yield "body", "model_attributes_type", "Input should be a valid dictionary or object"
        return
    required = ["model", "messages"] if counting else ["model", "messages", "max_tokens"]
    for name in required:
        if name not in body:
            yield f"body.{name}", "missing", "Field required"
    if not isinstance(body.get("model", ""), str):
        yield "body.model", "string_type", "Input should be a valid string"
    elif body.get("model") == "":
        yield "body.model", "value_error", "Value error, Model is required"
    if not counting and "max_tokens" in body:
        yield from _max_tokens(body["max_tokens"])
    if "messages" in body:
        yield from _messages(body["messages"])
    if body.get("system") is not None and not isinstance(body["system"], str):
        yield from _blocks(body["system"], "body.system")
    if body.get("tools") is not None:
        yield from _tools(body["tools"])
    if body.get("tool_choice") is not None:
        yield from _tool_choice(body["tool_choice"])
    if not counting:
        yield from _sampling(body)


def _max_tokens(value: Any) -> Iterator[Problem]:
    if not isinstance(value, int) or isinstance(value, bool):
        yield "body.max_tokens", "int_type", "Input should be a valid integer"
    elif value <= 0:
        yield "body.max_tokens", "value_error", "Value error, max_tokens must be positive"


def _messages(messages: Any) -> Iterator[Problem]:
    if not isinstance(messages, list):
        yield "body.messages", "list_type", "Input should be a valid list"
        return
    for n, message in enumerate(messages):
        where = f"body.messages.{n}"
        if not isinstance(message, dict):
            yield where, "model_type", "Input should be a valid dictionary"
            continue
        if message.get("role") not in ROLES:
            message_text = "Input should be 'user', 'assistant' or 'system'"
            yield f"{where}.role", "literal_error", message_text
        content = message.get("content")
        if content is None:
            yield f"{where}.content", "missing", "Field required"
        elif not isinstance(content, str):
            yield from _blocks(content, f"{where}.content")


def _blocks(blocks: Any, where: str) -> Iterator[Problem]:
    if not isinstance(blocks, list):
        yield where, "list_type", "Input should be a valid list"
        return
    for n, block in enumerate(blocks):
        if not isinstance(block, dict):
            yield f"{where}.{n}", "model_type", "Input should be a valid dictionary"
        elif block.get("type") not in BLOCK_TYPES:
            allowed = ", ".join(repr(kind) for kind in BLOCK_TYPES)
            yield f"{where}.{n}.type", "literal_error", f"Input should be {allowed}"
        elif block.get("input") is not None and not isinstance(block["input"], dict):
            yield f"{where}.{n}.input", "dict_type", "Input should be a valid dictionary"


def _tools(tools: Any) -> Iterator[Problem]:
    if not isinstance(tools, list):
        yield "body.tools", "list_type", "Input should be a valid list"
        return
    for n, tool in enumerate(tools):
        where = f"body.tools.{n}"
        if not isinstance(tool, dict):
            yield where, "model_type", "Input should be a valid dictionary"
            continue
        for name in ("name", "input_schema"):
            if name not in tool:  # a server tool ({"type": "web_search_…"}) has no input_schema
                yield f"{where}.{name}", "missing", "Field required"
        if "input_schema" in tool and not isinstance(tool["input_schema"], dict):
            yield f"{where}.input_schema", "dict_type", "Input should be a valid dictionary"


def _tool_choice(choice: Any) -> Iterator[Problem]:
    if not isinstance(choice, dict) or choice.get("type") not in TOOL_CHOICES:
        allowed = ", ".join(repr(kind) for kind in TOOL_CHOICES)
        yield "body.tool_choice.type", "literal_error", f"Input should be {allowed}"
    elif choice["type"] == "tool" and not choice.get("name"):
        message = "Value error, tool_choice.name is required when type is 'tool'"
        yield "body.tool_choice", "value_error", message


def _sampling(body: dict[str, Any]) -> Iterator[Problem]:
    for name in ("temperature", "top_p"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            yield f"body.{name}", "float_type", "Input should be a valid number"
    stops = body.get("stop_sequences")
    strings = isinstance(stops, list) and all(isinstance(stop, str) for stop in stops)
    if stops is not None and not strings:
        yield "body.stop_sequences", "list_type", "Input should be a valid list of strings"
