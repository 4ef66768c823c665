"""A session's usage as the API reported it, or as Scout counted it, never made up.

Live, every turn's usage is what the API put in its reply, and cost follows from it. Against the
local Messages-API server, in a replay or a scripted test, nobody bills anything: usage is
counted from the actual request (agent/loop/token_estimate.py), marked `estimate`, and no cost is
claimed. Per turn it keeps input, cache reads and writes, and output, for `/cost`; and what
compaction removed from the history, with the input tokens that saved over the later requests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.loop.pricing import price_for
from agent.loop.token_estimate import CHARS_PER_TOKEN


@dataclass(frozen=True)
class TurnUsage:
    turn: int
    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    output_tokens: int
    source: str  # "api" or "estimate"

    @property
    def prompt_tokens(self) -> int:
        """The whole request: fresh input, cache reads and cache writes."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens


@dataclass
class Compacted:
    """What compaction took out of the history, and what that spared the requests since."""

    compactions: int = 0
    results: int = 0
    chars_removed: int = 0
    tokens_not_sent: int = 0  # estimate: the removed text's tokens, once per later request


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float = 0.0  # billed turns only (usage the API reported)
    turns: int = 0
    estimated_turns: int = 0
    per_turn: list[TurnUsage] = field(default_factory=list)
    compacted: Compacted = field(default_factory=Compacted)

    def add(self, usage: dict[str, Any], model: str, source: str = "api") -> TurnUsage:
        row = TurnUsage(
            turn=self.turns + 1,
            input_tokens=usage.get("input_tokens") or 0,
            cache_read_input_tokens=usage.get("cache_read_input_tokens") or 0,
            cache_creation_input_tokens=usage.get("cache_creation_input_tokens") or 0,
            output_tokens=usage.get("output_tokens") or 0,
            source=source,
        )
        self.input_tokens += row.input_tokens
        self.output_tokens += row.output_tokens
        self.cache_creation_input_tokens += row.cache_creation_input_tokens
        self.cache_read_input_tokens += row.cache_read_input_tokens
        if source == "api":
            self.cost_usd += price_for(model).cost(usage)
        else:
            self.estimated_turns += 1
        self.turns += 1
        self.per_turn.append(row)
        return row

    def compaction(self, results: int, chars_removed: int) -> None:
        self.compacted.compactions += 1
        self.compacted.results += results
        self.compacted.chars_removed += chars_removed

    def request_sent(self) -> None:
        """A request went out without the text compaction removed so far."""
        self.compacted.tokens_not_sent += self.compacted.chars_removed // CHARS_PER_TOKEN

    @property
    def source(self) -> str:
        """'api', 'estimate', or 'mixed' (a resumed live session over a replayed one)."""
        if not self.estimated_turns:
            return "api"
        return "estimate" if self.estimated_turns == self.turns else "mixed"

    @property
    def prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    def as_dict(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "input_tokens": self.input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "output_tokens": self.output_tokens,
            "source": self.source,
            "cost_usd": round(self.cost_usd, 4),
            "compacted_results": self.compacted.results,
            "compaction_tokens_not_sent": self.compacted.tokens_not_sent,
        }
