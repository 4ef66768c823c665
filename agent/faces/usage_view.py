"""Usage as people read it: the session's closing line and the `/cost` table.

Numbers the API reported are shown as they are, with their cost. Numbers Scout counted itself
(a replay, the local Messages-API server) are marked as estimates and no cost is claimed for
them: no API billed anything.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from agent.faces.wording import plural
from agent.loop.accounting import Usage


def tokens(value: int) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.2f}M"
    return f"{value / 1000:.1f}k" if value >= 1000 else str(value)


def usage_line(usage: dict[str, Any]) -> str:
    """The closing line's usage part, from a session_end event's usage."""
    source = usage.get("source", "api")  # transcripts before 'source' carried API numbers
    read = usage.get("cache_read_input_tokens", 0)
    prompt = usage.get("input_tokens", 0) + read + usage.get("cache_creation_input_tokens", 0)
    mark = "~" if source == "estimate" else ""
    parts = [
        plural(usage.get("turns", 0), "model turn"),
        f"input {mark}{tokens(prompt)} tokens ({tokens(read)} cache reads), output "
        f"{mark}{tokens(usage.get('output_tokens', 0))}",
    ]
    if usage.get("compacted_results"):
        parts.append(f"{usage['compacted_results']} old results compacted")
    if source == "estimate":
        parts.append("estimated from the requests, no API billed")
    elif source == "mixed":
        parts.append(f"≈${usage.get('cost_usd', 0):.2f} for the turns the API billed")
    else:
        parts.append(f"≈${usage.get('cost_usd', 0):.2f}")
    return " · ".join(parts)


def cost_view(usage: Usage) -> Group:
    """Per model turn: input, cache reads and writes, output; then totals and compaction."""
    table = Table(title="usage per model turn", box=None, pad_edge=False)
    for column in ("turn", "input", "cache reads", "cache writes", "output", ""):
        table.add_column(column, justify="right" if column not in ("", "turn") else "left")
    for row in usage.per_turn:
        table.add_row(
            str(row.turn),
            str(row.input_tokens),
            str(row.cache_read_input_tokens),
            str(row.cache_creation_input_tokens),
            str(row.output_tokens),
            "estimate" if row.source == "estimate" else "",
        )
    table.add_row(
        "total",
        str(usage.input_tokens),
        str(usage.cache_read_input_tokens),
        str(usage.cache_creation_input_tokens),
        str(usage.output_tokens),
        "",
        style="bold",
    )
    return Group(table, *(Text(note) for note in _notes(usage)))


def _notes(usage: Usage) -> list[str]:
    notes = []
    if usage.source == "estimate":
        notes.append("counted from the requests Scout built (an estimate); no API billed")
    else:
        billed = " (the turns the API reported)" if usage.source == "mixed" else ""
        notes.append(f"cost ≈${usage.cost_usd:.4f}{billed}")
    done = usage.compacted
    if done.compactions:
        notes.append(
            f"compaction: {done.results} old results in {done.compactions} chunk(s), "
            f"{tokens(done.chars_removed)} characters out of the history; "
            f"≈{tokens(done.tokens_not_sent)} input tokens not sent since (estimate)"
        )
    else:
        notes.append("compaction: nothing compacted yet")
    return notes
