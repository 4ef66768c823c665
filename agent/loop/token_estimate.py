"""Counting a Messages-API request's tokens without the API: a documented estimate, never a guess.

Where no API reports usage (the local Messages-API server, a replay, a scripted test session),
Scout counts the request it actually built. The rule: every block of the prefix (each tool
definition, each system block, each message content block) costs its compact JSON length divided
by four, rounded up (Anthropic's rule of thumb of about four characters per token), and each
message three more for its framing. `cache_control` markers cost nothing. Real counts differ by
tens of percent; every number made this way is marked as an estimate where it is shown.

`PromptCacheModel` adds the prompt cache as the API documents it: a breakpoint caches the whole
prefix up to its block; a later request reads the longest cached prefix it finds by looking back
from each of its breakpoints over at most `LOOKBACK_BLOCKS` block boundaries; prefixes shorter
than the model's minimum are not cached. Entries do not expire here (the API keeps them five
minutes after their last use; a scripted session never pauses that long).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

CHARS_PER_TOKEN = 4
# A local server that counted usage this way says so in this response header (name, value).
USAGE_ESTIMATE_HEADER = ("x-scout-usage", "estimate")
MESSAGE_FRAMING_TOKENS = 3
LOOKBACK_BLOCKS = 20
MIN_CACHEABLE_TOKENS = 1024  # Sonnet and Opus 4.1; Haiku and Opus 4.5 need more (see below)
_MIN_CACHEABLE_BY_FAMILY = {"haiku": 2048, "opus-4-5": 4096, "opus-4-6": 4096}


def text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def block_tokens(block: Any) -> int:
    """One block's estimate: its compact JSON (without cache markers) over four characters."""
    return text_tokens(_canonical(block))


def content_tokens(content: list[dict[str, Any]]) -> int:
    """An assistant reply's output tokens, by the same rule (at least one)."""
    return max(1, sum(block_tokens(block) for block in content))


def min_cacheable_tokens(model: str) -> int:
    for family, minimum in _MIN_CACHEABLE_BY_FAMILY.items():
        if family in model:
            return minimum
    return MIN_CACHEABLE_TOKENS


@dataclass(frozen=True)
class PrefixBlock:
    """One block of the prompt prefix, in the order the API caches it: tools, system, messages."""

    tokens: int
    breakpoint: bool
    digest: str  # of the whole prefix up to and including this block


def prefix_blocks(body: dict[str, Any]) -> list[PrefixBlock]:
    blocks: list[PrefixBlock] = []
    running = hashlib.sha256()

    def add(block: Any, extra_tokens: int = 0) -> None:
        running.update(_canonical(block).encode())
        running.update(b"\x1e")
        breakpoint = isinstance(block, dict) and "cache_control" in block
        tokens = block_tokens(block) + extra_tokens
        blocks.append(PrefixBlock(tokens, breakpoint, running.copy().hexdigest()))

    for tool in body.get("tools") or []:
        add(tool)
    system = body.get("system")
    for block in [system] if isinstance(system, str) else system or []:
        add(block)
    for message in body.get("messages") or []:
        content = message.get("content")
        parts = [content] if isinstance(content, str) else list(content or [])
        running.update(str(message.get("role")).encode())
        for index, part in enumerate(parts):
            add(part, MESSAGE_FRAMING_TOKENS if index == 0 else 0)
    return blocks


def estimate_input_tokens(body: dict[str, Any]) -> int:
    """What `count_tokens` answers for this body, by the rule above."""
    return max(1, sum(block.tokens for block in prefix_blocks(body)))


class PromptCacheModel:
    """The prompt cache of one API key, as the documentation describes it, for usage estimates."""

    def __init__(self, lookback: int = LOOKBACK_BLOCKS) -> None:
        self.lookback = lookback
        self._cached: set[str] = set()

    def usage(self, body: dict[str, Any]) -> dict[str, int]:
        """Input, cache-read and cache-write tokens for this request; caches its breakpoints."""
        blocks = prefix_blocks(body)
        totals, running = [], 0
        for block in blocks:
            running += block.tokens
            totals.append(running)
        total = max(1, running)
        marks = [index for index, block in enumerate(blocks) if block.breakpoint]
        minimum = min_cacheable_tokens(str(body.get("model", "")))
        cacheable = [index for index in marks if totals[index] >= minimum]
        if not cacheable:
            return _usage(total, 0, 0)
        read = 0
        for mark in marks:
            for position in range(mark, max(-1, mark - self.lookback), -1):
                if blocks[position].digest in self._cached:
                    read = max(read, totals[position])
                    break
        end = totals[cacheable[-1]]
        for index in cacheable:
            self._cached.add(blocks[index].digest)
        return _usage(total - end, read, max(0, end - read))


def _usage(fresh: int, read: int, written: int) -> dict[str, int]:
    return {
        "input_tokens": fresh,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": written,
    }


def _canonical(block: Any) -> str:
    if isinstance(block, dict) and "cache_control" in block:
        block = {key: value for key, value in block.items() if key != "cache_control"}
    return json.dumps(block, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
