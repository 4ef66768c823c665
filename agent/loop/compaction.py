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

Older still, whole turns fold away: a reply of tool calls and its results, older than the
newest `fold_after_turns` turns and with nothing protected in it, leaves the history and each of
its calls becomes a line (what, outcome, the id `recall_result` takes) in the briefing's log,
where a call repeated with the same outcome is one line (agent/loop/briefing.py). Folding
rewrites the history from the oldest folded turn on, so it too waits for a chunk:
`fold_after_turns` turns at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agent.loop.events import ToolCallEvent, ToolResultEvent
from agent.loop.history import STUB_MARK, Message, is_briefing_block, result_blocks, text_of

_SPILL = re.compile(r"full output saved to (\S+?)(?= \.\.\.\]|;|\s|$)")


@dataclass(frozen=True)
class CompactionPolicy:
    """When results are compacted; the values come from Settings (one place for defaults)."""

    enabled: bool
    keep_turns: int
    min_chars: int
    chunk_chars: int
    fold_after_turns: int = 0  # 0: never fold whole turns into the briefing's log


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
    folded: bool = False  # its turn left the history; a line in the briefing's log stands for it


class CallLedger:
    """Every call of the session, filled from the same events the transcript holds.

    The live session feeds it as calls are recorded; a resume feeds it from the transcript, so
    both describe a compacted call with the same stub.
    """

    def __init__(self, kept_whole: frozenset[str] = frozenset()) -> None:
        self.records: dict[str, CallRecord] = {}
        #: tools whose results are never stubbed: the runtime fills it from the tools that
        #: declare `approves_plan` (a plan and its approval must stay readable)
        self.kept_whole = kept_whole

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

    def fold(self, call_ids: list[str]) -> None:
        for call_id in call_ids:
            if call_id in self.records:
                self.records[call_id].folded = True

    def folded(self) -> list[CallRecord]:
        return [record for record in self.records.values() if record.folded]

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
    statuses = per_host.values() if isinstance(per_host, dict) else []
    if statuses and all(
        isinstance(s, dict) and ("exit_status" in s or "error" in s) for s in statuses
    ):
        return _exit_statuses(per_host)
    if meta.get("exit_status") is not None:
        return f"exit {meta['exit_status']}"
    if event.is_error:
        first = event.text.strip().splitlines()[0] if event.text.strip() else ""
        return f"error: {first[:100]}"
    return "ok"


def _has_status(facts: Any) -> bool:
    """A command's outcome on one host (ssh_exec), not the facts found there (recon)."""
    return isinstance(facts, dict) and ("exit_status" in facts or "error" in facts)


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
    if len(groups) == 1:
        return next(iter(groups))  # the same on every host the call names
    return "; ".join(f"{status} on {', '.join(hosts)}" for status, hosts in groups.items())


def stub_for(record: CallRecord, chars: int) -> str:
    """The line that replaces a compacted result.

    It names the tool and how the call ended; what the call asked is in its tool_use right
    above, which always stays with it (a turn folds away whole), so the stub does not repeat it.
    """
    where = f"transcript event {record.seq}" if record.seq is not None else "the transcript"
    spill = f" and {record.spills[0]}" if record.spills else ""
    return (
        f"{STUB_MARK} {record.tool} → {record.outcome}; {chars} chars in {where}{spill}; "
        "recall_result reads it]"
    )


def is_stub(text: str) -> bool:
    return text.startswith(STUB_MARK)


@dataclass
class CompactionPlan:
    """One compaction: results to replace by their stubs, and calls whose turns fold away."""

    stubs: dict[str, str] = field(default_factory=dict)
    folded: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.stubs or self.folded)


def plan_compaction(
    messages: list[Message], ledger: CallLedger, policy: CompactionPolicy, *, force: bool = False
) -> CompactionPlan:
    """What to compact now; empty unless a whole chunk is due.

    `force` compacts every candidate however little it saves (for a prompt over the window).
    """
    replies = [index for index, message in enumerate(messages) if message["role"] == "assistant"]
    if not policy.enabled or len(replies) <= policy.keep_turns:
        return CompactionPlan()
    boundary = replies[-policy.keep_turns] if policy.keep_turns else len(messages)
    turn_of = _turn_of_calls(messages)
    stubs: dict[str, str] = {}
    saved = 0
    for call_id, block in result_blocks(messages[:boundary]).items():
        text = text_of(block)
        record = ledger.records.get(call_id)
        if record is None or is_stub(text) or len(text) < policy.min_chars:
            continue
        if _protected(record, turn_of, ledger):
            continue
        stub = stub_for(record, len(text))
        stubs[call_id] = stub
        saved += len(text) - len(stub)
    folded = _foldable(messages, replies, ledger, policy, turn_of)
    if saved < policy.chunk_chars and not (force and stubs) and not folded:
        return CompactionPlan()
    return CompactionPlan(stubs, folded)


def _protected(record: CallRecord, turn_of: dict[str, int], ledger: CallLedger) -> bool:
    """The plan and its approval, gate refusals, and errors the model has not answered."""
    if record.tool in ledger.kept_whole or record.gated:
        return True
    return record.is_error and not _answered(record, turn_of, ledger)


def _foldable(
    messages: list[Message],
    replies: list[int],
    ledger: CallLedger,
    policy: CompactionPolicy,
    turn_of: dict[str, int],
) -> list[str]:
    """Calls of whole turns older than `fold_after_turns`, once that many can fold at once.

    A turn folds when it is a reply of tool calls answered by a message of results only, and
    none of its calls is protected; its calls become lines in the briefing's log.
    """
    if not policy.fold_after_turns or len(replies) <= policy.fold_after_turns:
        return []
    horizon = replies[-policy.fold_after_turns]
    turns: list[list[str]] = []
    for index in replies:
        if index >= horizon or index == 0 or index + 1 >= len(messages):
            continue
        uses = [b["id"] for b in messages[index]["content"] if b.get("type") == "tool_use"]
        answer = messages[index + 1]
        only_results = answer["role"] == "user" and all(
            block.get("type") == "tool_result" or is_briefing_block(block)
            for block in answer["content"]
        )
        records = [ledger.records.get(call_id) for call_id in uses]
        if not uses or not only_results or None in records:
            continue
        if any(_protected(record, turn_of, ledger) for record in records if record is not None):
            continue
        turns.append(uses)
    if len(turns) < max(1, policy.fold_after_turns):
        return []
    return [call_id for uses in turns for call_id in uses]


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
