"""Token prices, to show cost and enforce a session's cost budget (an estimate, per MTok in USD)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Price:
    input: float
    output: float

    def cost(self, usage: dict[str, Any]) -> float:
        fresh = usage.get("input_tokens") or 0
        written = usage.get("cache_creation_input_tokens") or 0
        read = usage.get("cache_read_input_tokens") or 0
        out = usage.get("output_tokens") or 0
        total = fresh * self.input + written * self.input * 1.25 + read * self.input * 0.1
        return (total + out * self.output) / 1_000_000


_FAMILIES = {"opus": Price(5.0, 25.0), "sonnet": Price(3.0, 15.0), "haiku": Price(1.0, 5.0)}


def price_for(model: str) -> Price:
    """Unknown models are priced like Sonnet, so a budget still binds."""
    for family, price in _FAMILIES.items():
        if family in model:
            return price
    return _FAMILIES["sonnet"]
