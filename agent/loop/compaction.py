"""Compaction: old, large tool results give way to one-line stubs, in chunks, at stable points.

What stays whole: the newest `keep_turns` model turns and their results (what the model is
about to act on), results under `min_chars`, the plan and its approval (`propose_plan`),
calls the gate refused, and any error the model has not answered yet (no later call of the same
tool on the same hosts). Everything else older and larger is replaced by a stub that says what
the call was, how it ended, and where its full text is (the transcript event, a spill file, and
`recall_result`). The facts those results carried stay in the briefing the session refreshes at
the head of the conversation (agent/loop/briefing.py).

Compaction rewrites the history from the first replaced block on, which costs the prompt cache
everything after it; so it waits until at least `chunk_chars` can go at once, then takes every
candidate, and the history stays byte-stable (and cached) until the next chunk is due.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agent.loop.events import ToolCallEvent, ToolResultEvent
from agent.loop.history import Message, result_blocks, text_of

STUB_MARK = "[compacted:"
PROTECTED_TOOLS = frozenset({"propose_plan"})
_SPILL = re.compile(r"full output saved to (\S+?)(?= \.\.\.\]|;|\s|$)")


@dataclass(frozen=True)
class CompactionPolicy:
    """When results are compacted; the values come from Settings (one place for defaults)."""

    enabled: bool
    keep_turns: int
    min_chars: int
    chunk_chars: int


@dataclass
class CallRecord:
    """One call as the stub describes it, and its full text for `recall_result`."""

    id: str
    tool: str
    summary: str = ""
    hosts: list[str] = field(default_factory=list)
    seq: int | None = None
    is_error: bool = False
    gated: bool = False
    outcome: str = ""
    text: str = ""
    spills: list[str] = field(default_factory=list)


class CallLedger:
    """Every call of the session, filled from the same events the transcript holds.

    The live session feeds it as calls are recorded; a resume feeds it from the transcript, so
    both describe a compacted call with the same stub.
    """

    def __init__(self) -> None:
        self.records: dict[str, CallRecord] = {}

    def called(self, event: ToolCallEvent) -> None:
        self.records[event.id] = CallRecord(
            id=event.id, tool=event.name, summary=event.summary, hosts=list(event.hosts)
        )

    def finished(self, event: ToolResultEvent) -> None:
        record = self.records.setdefault(event.id, CallRecord(id=event.id, tool=event.name))
        record.seq = event.seq
        record.is_error = event.is_error
        record.gated = bool(event.meta.get("gated"))
        record.outcome = outcome_of(event)
        record.text = event.text
        record.spills = _SPILL.findall(event.text)
        if event.meta.get("spill_path"):
            record.spills.append(str(event.meta["spill_path"]))

    def full_text(self, call_id: str) -> str | None:
        record = self.records.get(call_id)
        return record.text if record is not None and record.seq is not None else None


def outcome_of(event: ToolResultEvent) -> str:
    """How a call ended, in a few words: exit statuses per host, timed out, refused, error."""
    meta = event.meta
    if meta.get("timed_out"):
        return "timed out"
    if meta.get("cancelled"):
        return "cancelled"
    if meta.get("gated"):
        return "not run (refused at the gate)"
    per_host = event.data.get("hosts")
    if isinstance(per_host, dict) and per_host:
        return _exit_statuses(per_host)
    if meta.get("exit_status") is not None:
        return f"exit {meta['exit_status']}"
    if event.is_error:
        first = event.text.strip().splitlines()[0] if event.text.strip() else ""
        return f"error: {first[:100]}"
    return "ok"


def _exit_statuses(per_host: dict[str, Any]) -> str:
    groups: dict[str, list[str]] = {}
    for host, facts in per_host.items():
        if not isinstance(facts, dict):
            continue
        if facts.get("error"):
            status = str(facts.get("kind") or "ssh error")
        elif facts.get("timed_out"):
            status = "timed out"
        else:
            status = f"exit {facts.get('exit_status')}"
        groups.setdefault(status, []).append(host)
    return "; ".join(f"{status} on {', '.join(hosts)}" for status, hosts in groups.items())


def stub_for(record: CallRecord, chars: int) -> str:
    """The line that replaces a compacted result."""
    where = f" on {', '.join(record.hosts)}" if record.hosts else ""
    what = " ".join(record.summary.split())
    what = what if len(what) <= 80 else what[:79] + "…"
    sources = [f"transcript event {record.seq}"] if record.seq is not None else []
    sources += record.spills[:1]
    return (
        f"{STUB_MARK} {record.tool}{where} `{what}` → {record.outcome}; {chars} chars, full text "
        f'in {" and ".join(sources)}; recall_result("{record.id}") reads it again]'
    )


def is_stub(text: str) -> bool:
    return text.startswith(STUB_MARK)


def plan_compaction(
    messages: list[Message], ledger: CallLedger, policy: CompactionPolicy, *, force: bool = False
) -> dict[str, str]:
    """The results to replace now, with their stubs; empty unless a whole chunk is due.

    `force` compacts every candidate however little it saves (for a prompt over the window).
    """
    replies = [index for index, message in enumerate(messages) if message["role"] == "assistant"]
    if not policy.enabled or len(replies) <= policy.keep_turns:
        return {}
    boundary = replies[-policy.keep_turns] if policy.keep_turns else len(messages)
    turn_of = _turn_of_calls(messages)
    candidates: dict[str, str] = {}
    saved = 0
    for call_id, block in result_blocks(messages[:boundary]).items():
        text = text_of(block)
        record = ledger.records.get(call_id)
        if record is None or is_stub(text) or len(text) < policy.min_chars:
            continue
        if record.tool in PROTECTED_TOOLS or record.gated:
            continue
        if record.is_error and not _answered(record, turn_of, ledger):
            continue
        stub = stub_for(record, len(text))
        candidates[call_id] = stub
        saved += len(text) - len(stub)
    if saved < policy.chunk_chars and not (force and candidates):
        return {}
    return candidates


def _turn_of_calls(messages: list[Message]) -> dict[str, int]:
    turns: dict[str, int] = {}
    for index, message in enumerate(messages):
        if message["role"] == "assistant":
            for block in message["content"]:
                if block.get("type") == "tool_use":
                    turns[block["id"]] = index
    return turns


def _answered(error: CallRecord, turn_of: dict[str, int], ledger: CallLedger) -> bool:
    """The model called the same tool on the same hosts again after this error."""
    asked_at = turn_of.get(error.id, -1)
    return any(
        turn_of.get(other.id, -1) > asked_at
        and other.tool == error.tool
        and set(other.hosts) == set(error.hosts)
        for other in ledger.records.values()
    )
