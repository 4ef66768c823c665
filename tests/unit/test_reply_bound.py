"""A model reply is bounded to what one transcript line holds, measured as the writer writes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.loop.calls import ToolCall
from agent.loop.events import Event, Notice
from agent.loop.executor import Executor
from agent.loop.history import omitted_input
from agent.loop.model_turn import AssistantTurn
from agent.loop.recorder import Recorder, SessionListener
from agent.loop.reply_bound import MAX_REPLY_BYTES, bound_reply, fit_turn, line_bytes
from agent.loop.transcript import MAX_LINE_BYTES
from agent.runtime.settings import Settings
from agent.safety.redact import Redactor
from tests.support.no_hosts import no_hosts
from tools.base import ToolContext, ToolResult
from tools.recon_tool import ReconTool
from tools.registry import ToolRegistry
from tools.todo import TodoList, TodoWriteTool


def use(call_id: str, value: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "ssh_exec", "input": {"command": value}}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def sized(total: int) -> list[dict[str, Any]]:
    """A reply of exactly `total` bytes as the writer serialises it."""
    content = [text(""), use("a", "")]
    pad = total - line_bytes(content)
    return [text("t" * pad), use("a", "")]


def test_a_reply_that_fits_is_untouched() -> None:
    content = sized(MAX_REPLY_BYTES)
    assert line_bytes(content) == MAX_REPLY_BYTES
    bounded = bound_reply(content)
    assert not bounded.changed and bounded.content == content


def test_one_byte_over_cuts_and_then_fits() -> None:
    bounded = bound_reply(sized(MAX_REPLY_BYTES + 1))
    assert bounded.changed
    assert line_bytes(bounded.content) <= MAX_REPLY_BYTES


def test_the_largest_inputs_are_noted_first() -> None:
    content = [
        text("plan"),
        use("small", "s" * 200_000),
        use("large", "l" * 1_500_000),
        use("medium", "m" * 1_000_000),
    ]
    bounded = bound_reply(content)
    assert bounded.omitted_inputs == ["large"]
    kept = {b["id"]: b["input"] for b in bounded.content if b["type"] == "tool_use"}
    assert set(kept["large"]) == {"omitted"}
    assert kept["small"] == content[1]["input"] and kept["medium"] == content[3]["input"]
    assert bounded.content[0] == text("plan") and bounded.cut_texts == 0


def test_control_characters_count_as_they_are_escaped() -> None:
    plain = [use("a", "x" * 500_000)]
    control = [use("a", "\x01" * 500_000)]  # written as \u0001: six bytes each
    assert not bound_reply(plain).changed
    assert bound_reply(control).omitted_inputs == ["a"]


def test_text_alone_too_long_is_cut_with_a_note() -> None:
    bounded = bound_reply([text("é" * MAX_REPLY_BYTES), use("a", "ls")])
    assert bounded.cut_texts == 1 and bounded.omitted_inputs == []
    assert bounded.content[0]["text"].endswith("longer than a transcript line]")
    assert bounded.content[1] == use("a", "ls")
    assert line_bytes(bounded.content) <= MAX_REPLY_BYTES


def test_a_block_too_large_in_itself_becomes_a_note() -> None:
    huge_name = {"type": "tool_use", "id": "a", "name": "n" * MAX_LINE_BYTES, "input": {}}
    bounded = bound_reply([huge_name, {"type": "mystery", "blob": "b" * MAX_LINE_BYTES}])
    assert bounded.dropped_blocks == 2
    assert all(b["type"] == "text" for b in bounded.content)
    assert line_bytes(bounded.content) <= MAX_REPLY_BYTES


def test_many_small_blocks_still_end_within_the_limit() -> None:
    bounded = bound_reply([text("ab")] * 1000, limit=2000)
    assert line_bytes(bounded.content) <= 2000


def test_each_block_is_measured_a_few_times_however_many_go() -> None:
    # measuring every block again for each one that went took seconds for a thousand blocks
    measured = 0

    def counted(value: Any) -> Any:
        nonlocal measured
        measured += 1
        return value

    bounded = bound_reply([text("ab")] * 1000, limit=2000, redact=counted)
    assert bounded.dropped_blocks > 500 and line_bytes(bounded.content) <= 2000
    assert measured < 10 * 1000  # it was 1.5 million


def test_the_limit_holds_after_redaction_too() -> None:
    # a one-letter password is written as [REDACTED]: the line grows as it is masked
    redactor = Redactor()
    content = [
        {"type": "tool_use", "id": f"c{n}", "name": "x", "input": {"password": "p"}}
        for n in range(100)
    ]
    assert line_bytes(content) < 7000 < line_bytes(redactor.data(content))
    bounded = bound_reply(content, limit=7000, redact=redactor.data)
    assert bounded.changed
    assert line_bytes(redactor.data(bounded.content)) <= 7000


class Seen(SessionListener):
    def __init__(self) -> None:
        self.events: list[Event] = []

    def on_event(self, event: Event) -> None:
        self.events.append(event)


def test_the_session_is_told_what_was_cut() -> None:
    recorder = Recorder(None, "s1")
    seen = Seen()
    recorder.listeners.append(seen)
    turn = AssistantTurn(content=[use("a", "\x00" * 1_000_000)], stop_reason="tool_use")
    fitted = fit_turn(turn, recorder, Redactor().data)
    assert fitted.tool_uses()[0]["input"] == {"omitted": "an input of 6000015 characters, not kept"}
    assert [(e.kind, e.level) for e in seen.events if isinstance(e, Notice)] == [
        ("reply_too_long", "warning")
    ]
    assert fit_turn(fitted, recorder, Redactor().data) is fitted  # a replayed reply: nothing more


def test_no_tool_runs_an_input_replaced_by_its_size_note(tmp_path: Path) -> None:
    # recon ignores fields it does not know: its Input alone would run the note with defaults
    registry = ToolRegistry([ReconTool(no_hosts()), TodoWriteTool(TodoList())])
    context = ToolContext(spill_dir=tmp_path)
    executor = Executor(registry, context, limits=Settings().executor_limits())
    for name in registry.names():
        result = executor.prepare(ToolCall("c1", name, omitted_input("x" * 100_000)))
        assert isinstance(result, ToolResult) and result.is_error
        assert result.reason is not None and result.reason.kind == "input_too_long"
