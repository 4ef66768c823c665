"""It works, not only answers: real generations whose content is checked.

`/health` and `/v1/models` answer 200 while the engine core is dead (vLLM issue #39863), and a
fast configuration can be a wrong one. So the proof asks three things whose answers are known:
a question whose answer the prompt states; one tool call (where the engine has a tool-call
parser: without one vLLM refuses `tools`, and that is reported, not failed); and the same kind of
question with its fact buried in a prompt near the served --max-model-len, so a context length
that fails when used fails here. Each is one bounded request.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from tools.deploy.proof.http import EndpointClient, EndpointError

SECRET = "cobalt-7319"
QUESTION = f"The passphrase is {SECRET}. What is the passphrase? Reply with the passphrase only."
CITY = "Trondheim"
TOOL_PROMPT = f"The city is {CITY}. Use get_weather to look up the weather in the city."
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
NEEDLE_CODE = "4417-ember"
FILLER = "The river runs past the old mill and the grass grows green by the water. "
NEEDLE_SHARE = 0.85  # of --max-model-len: near it, with room for a tokenizer that counts more
CHARS_PER_TOKEN = 4  # English prose in BPE tokenizers; the filler is plain common words
NO_PARSER = "tool choice requires"  # vLLM's 400 when no --tool-call-parser is set


@dataclass
class GenerationChecks:
    """What the checks asked and what came back."""

    answer: str
    tool_call: str  # "round-trip ok", or why it was not tried
    needle_tokens: int | None  # the prompt's approximate size; None: not tried
    needle: str  # "found", or why it was not tried

    def render(self) -> str:
        needle = (
            f"needle found at ~{self.needle_tokens:,} tokens"
            if self.needle == "found"
            else f"needle: {self.needle}"
        )
        return f"answer checked · tool call: {self.tool_call} · {needle}"


async def check_generation(
    client: EndpointClient, model: str, max_model_len: int | None, *, timeout_s: float
) -> GenerationChecks:
    """The three checks, at once (none is a measurement: they may share the engine); an
    EndpointError says which failed and what to do. A failed plain question ends the others at
    once: a dead engine is known at its timeout, not at the long-context check's."""
    tool = asyncio.create_task(_tool_round_trip(client, model, timeout_s))
    needle = asyncio.create_task(_needle(client, model, max_model_len, timeout_s))
    try:
        answer = await _ask(client, model, QUESTION, timeout_s, what="a one-line question")
        if SECRET not in answer:
            raise EndpointError(
                f"the model on {client.where} answered {answer[:120]!r} to a question whose "
                f"answer its prompt states ({SECRET}): it generates, but wrongly — check the "
                "chat template, the model's revision and its quantization in the serve command"
            )
        tried = await tool
        needle_tokens, found = await needle
    finally:
        for task in (tool, needle):
            task.cancel()
        await asyncio.gather(tool, needle, return_exceptions=True)
    return GenerationChecks(answer, tried, needle_tokens, found)


async def _ask(
    client: EndpointClient, model: str, prompt: str, timeout_s: float, *, what: str
) -> str:
    body = {"model": model, "messages": [{"role": "user", "content": prompt}],
            "max_tokens": 32, "temperature": 0}  # fmt: skip
    reply = await _bounded(client, body, timeout_s, what)
    try:
        return reply["choices"][0]["message"]["content"] or ""
    except (KeyError, IndexError, TypeError):
        raise EndpointError(f"{what} on {client.where} got no message back: {reply}") from None


async def _bounded(
    client: EndpointClient, body: dict[str, Any], timeout_s: float, what: str
) -> dict[str, Any]:
    try:
        return await asyncio.wait_for(client.chat(body), timeout_s)
    except TimeoutError:
        raise EndpointError(
            f"{what} on {client.where} did not finish in {timeout_s:g} s though /health and "
            "/v1/models answer: the engine core is likely dead or frozen behind a live API "
            "server (vLLM issue #39863) — read `docker logs` of its container for EngineCore "
            "errors and restart the engine"
        ) from None


async def _tool_round_trip(client: EndpointClient, model: str, timeout_s: float) -> str:
    body = {"model": model, "messages": [{"role": "user", "content": TOOL_PROMPT}],
            "tools": [WEATHER_TOOL], "tool_choice": "auto", "max_tokens": 64,
            "temperature": 0}  # fmt: skip
    try:
        reply = await _bounded(client, body, timeout_s, "a tool call")
    except EndpointError as exc:
        if NO_PARSER in str(exc):
            return "not tried (no --tool-call-parser)"
        raise
    try:
        call = reply["choices"][0]["message"]["tool_calls"][0]["function"]
        arguments = json.loads(call["arguments"])
    except (KeyError, IndexError, TypeError, ValueError):
        raise EndpointError(
            f"a tool call on {client.where} did not come back as a tool call: "
            f"{str(reply)[:200]} — the --tool-call-parser does not match the model's format"
        ) from None
    if call.get("name") != "get_weather" or arguments.get("city") != CITY:
        raise EndpointError(
            f"a tool call on {client.where} came back wrong: {call.get('name')}({arguments}), "
            f"expected get_weather(city={CITY!r}) — check the --tool-call-parser"
        )
    return "round-trip ok"


def needle_prompt(tokens: int) -> str:
    """About `tokens` tokens of filler with the needle in the middle, and the question last."""
    repeats = max(1, tokens * CHARS_PER_TOKEN // len(FILLER))
    half = FILLER * (repeats // 2)
    needle = f"The vault code is {NEEDLE_CODE}. "
    return f"{half}{needle}{half}What is the vault code? Reply with the code only."


async def _needle(
    client: EndpointClient, model: str, max_model_len: int | None, timeout_s: float
) -> tuple[int | None, str]:
    if not max_model_len:
        return None, "not tried (/v1/models gives no max_model_len)"
    tokens = int(max_model_len * NEEDLE_SHARE)
    what = f"a {tokens:,}-token prompt (--max-model-len {max_model_len:,})"
    answer = await _ask(client, model, needle_prompt(tokens), timeout_s * 5, what=what)
    if NEEDLE_CODE not in answer:
        raise EndpointError(
            f"a fact placed in {what} on {client.where} was not found (answered "
            f"{answer[:80]!r}): the context length fails when used — serve a shorter "
            "--max-model-len, or enable the rope scaling the model card names for long contexts"
        )
    return tokens, "found"
