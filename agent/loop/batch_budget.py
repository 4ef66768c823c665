"""One turn's results share a budget: a batch of 32 calls cannot flood the conversation.

Each tool already bounds its own result; this bounds their sum. First, calls that asked the same
tool the same thing on different hosts and got the same answer (`meta["output_digest"]`) are
shown once: the first result names the other hosts, the others point to it. Then, if the batch
is still over `budget_chars`, the largest results are cut (head and tail, whole text spilled to
a file named in the cut) to the one size that makes the sum fit, so small results stay whole.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from agent.loop.calls import ToolCall
from tools.base import ToolResult
from tools.text.bounded import bound_text

MIN_SHARE = 600
CUT_ALLOWANCE = 320  # the note and the cut marker (with the spill file's path) a cut adds


def shape_batch(
    calls: Sequence[ToolCall], results: Sequence[ToolResult], budget_chars: int, spill_dir: Path
) -> dict[str, str]:
    """The new text for each call whose result must change (by call id); {} when none must."""
    texts = {call.id: result.text for call, result in zip(calls, results, strict=True)}
    changed = _group_identical(calls, results, texts)
    total = sum(len(text) for text in texts.values())
    if total <= budget_chars:
        return changed
    cap = max(MIN_SHARE, _fair_cap([len(t) for t in texts.values()], budget_chars) - CUT_ALLOWANCE)
    for call_id, text in texts.items():
        if len(text) > cap:
            bounded = bound_text(text, limit=cap, spill_dir=spill_dir, label=f"batch-{call_id}")
            note = (
                f"[this turn's {len(texts)} results share {budget_chars} characters; "
                f"this one is cut to {cap}]\n"
            )
            texts[call_id] = changed[call_id] = note + bounded.text
    return changed


def _group_identical(
    calls: Sequence[ToolCall], results: Sequence[ToolResult], texts: dict[str, str]
) -> dict[str, str]:
    groups: dict[str, list[tuple[ToolCall, ToolResult]]] = {}
    for call, result in zip(calls, results, strict=True):
        digest = result.meta.get("output_digest")
        if digest:
            asked = {k: v for k, v in call.input.items() if k not in ("host", "hosts")}
            key = json.dumps([call.name, asked, digest], sort_keys=True, default=str)
            groups.setdefault(key, []).append((call, result))
    changed: dict[str, str] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        (first, first_result), rest = members[0], members[1:]
        hosts = [_host(call) for call, _ in rest]
        changed[first.id] = texts[first.id] = (
            f"{first_result.text}\n[the same output came from {', '.join(hosts)} "
            f"({', '.join(call.id for call, _ in rest)})]"
        )
        for call, _ in rest:
            changed[call.id] = texts[call.id] = (
                f"[same output as {first.id} on {_host(first)}; shown there once]"
            )
    return changed


def _host(call: ToolCall) -> str:
    host = call.input.get("host")
    return str(host) if host else "the same hosts"


def _fair_cap(sizes: list[int], budget: int) -> int:
    """The largest size c with sum(min(size, c)) <= budget (at least MIN_SHARE)."""
    remaining, count = budget, len(sizes)
    for size in sorted(sizes):
        share = remaining // count
        if size > share:
            return max(MIN_SHARE, share)
        remaining -= size
        count -= 1
    return max(sizes)
