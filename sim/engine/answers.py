"""What the simulated model says: the facts its prompt states, recalled when asked, else a passage.

A real instruction-tuned model asked "What is the X?" after a prompt that says "The X is Y."
answers Y; that is all the simulated model knows how to do, and it is enough for a check with a
checkable answer, a needle in a long context, and a tool call whose arguments come from the
prompt. Past `recall_tokens` of prompt (the scenario's `generation.recall_tokens`) it no longer
finds the fact, as a model served past its native context without rope scaling does.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .pacing import token

QUESTION = re.compile(r"[Ww]hat is the ([\w][\w -]{0,40}?)\?")


def fact(prompt: str, name: str) -> str | None:
    """The last value the prompt gives for `name` ("The NAME is VALUE."), or None."""
    found = re.findall(rf"\b[Tt]he {re.escape(name)} is ([^\s.,;]+)", prompt)
    return found[-1] if found else None


def recalled(prompt: str, prompt_tokens: int, recall_tokens: int | None) -> bool:
    return recall_tokens is None or prompt_tokens <= recall_tokens


def answer(prompt: str, prompt_tokens: int, recall_tokens: int | None) -> str | None:
    """The answer to the prompt's last question when the prompt states it, else None."""
    asked = QUESTION.findall(prompt)
    if not asked or not recalled(prompt, prompt_tokens, recall_tokens):
        return None
    return fact(prompt[: prompt.rfind(asked[-1])], asked[-1].strip())


def pieces(reply: str | None, n: int) -> list[str]:
    """The tokens of a reply: the answer as one piece (the model stops after it), else n tokens
    of the passage."""
    if reply is not None:
        return [reply]
    return [token(i) for i in range(n)]


def tool_call(
    prompt: str, tools: list[Any], prompt_tokens: int, recall_tokens: int | None
) -> dict[str, Any] | None:
    """The call a model makes when offered `tools`: the one the prompt names (else the first),
    its required arguments filled from the facts the prompt states. None when none is usable."""
    functions = [t.get("function") or {} for t in tools if isinstance(t, dict)]
    functions = [f for f in functions if isinstance(f.get("name"), str)]
    if not functions:
        return None
    chosen = next((f for f in functions if f["name"] in prompt), functions[0])
    required = (chosen.get("parameters") or {}).get("required") or []
    known = recalled(prompt, prompt_tokens, recall_tokens)
    arguments = {name: fact(prompt, name) if known else None for name in required}
    return {"name": chosen["name"], "arguments": json.dumps(arguments)}
