"""Recorded sessions: re-driven through ReplayClient with drift reports, and resumed."""

import json
from pathlib import Path

import pytest

from agent.loop.events import (
    ModelResponse,
    SessionStart,
    TodoUpdate,
    ToolCallEvent,
    UserMessage,
)
from agent.loop.transcript import TranscriptWriter, read_transcript
from agent.replay.client import ReplayClient
from agent.runtime.builder import build_session, open_recorder
from agent.runtime.resume import INTERRUPTED_TEXT, rebuild
from agent.safety.redact import Redactor
from agent.standin.server import MessagesAPIServer
from tests.support.probe_tools import EchoTool, FailTool
from tests.support.scout_cli import scout
from tests.support.session_kit import make_session, text_turn, tool_turn
from tools.base import ToolContext

SCRIPT = [
    tool_turn([("toolu_1", "echo", {"text": "a"}), ("toolu_2", "echo", {"text": "b"})]),
    text_turn("Both answered."),
]


async def _record(tmp_path):
    with MessagesAPIServer(SCRIPT) as server:
        session = make_session(server.url, [EchoTool()], tmp_path)
        await session.send("ask twice")
        session.end("done")
    return read_transcript(tmp_path / "session.jsonl").events


def _replay_session(events, tools, tmp_path):
    client = ReplayClient(events)
    session = build_session(
        open_recorder(None, Redactor()),
        client=client,
        tools=tools,
        context=ToolContext(spill_dir=tmp_path / "spill2"),
        system_prompt="You are a test agent.",
        model="claude-test",
        redactor=Redactor(),
    )
    return client, session


async def test_replay_of_a_recording_has_no_drift(tmp_path):
    events = await _record(tmp_path)
    echo = EchoTool()
    client, session = _replay_session(events, [echo], tmp_path)
    outcome = await session.send("ask twice")
    assert outcome.text == "Both answered."
    assert client.drift == [] and client.remaining == 0
    assert echo.runs == ["a", "b"]


async def test_replay_reports_drift_with_a_readable_diff(tmp_path):
    events = await _record(tmp_path)

    class BrokenEcho(FailTool):
        name = "echo"
        Input = EchoTool.Input

    client, session = _replay_session(events, [BrokenEcho()], tmp_path)
    await session.send("ask twice")
    assert len(client.drift) == 1
    diff = client.drift[0].diff
    assert "-tool_result toolu_1 ok" in diff and "+tool_result toolu_1 error" in diff


async def test_replay_past_the_recording_says_so(tmp_path):
    events = await _record(tmp_path)
    _client, session = _replay_session(events, [EchoTool()], tmp_path)
    await session.send("ask twice")
    outcome = await session.send("and again")
    assert outcome.stop == "error" and "The recording ends after 2 model turns" in outcome.message


def crashed_transcript(path, session_id):
    """A session that announced call t1 and stopped before its result was written."""
    writer = TranscriptWriter(path, session_id, Redactor())
    writer.write(SessionStart(model="claude-test"))
    writer.write(UserMessage(text="stop the old container"))
    writer.write(
        ModelResponse(
            turn=1,
            content=[{"type": "tool_use", "id": "t1", "name": "echo", "input": {"text": "x"}}],
            stop_reason="tool_use",
        )
    )
    writer.write(ToolCallEvent(id="t1", name="echo", input={"text": "x"}))
    writer.close()
    return path


def test_resume_answers_calls_that_never_finished(tmp_path):
    path = crashed_transcript(tmp_path / "crashed.jsonl", "s9")
    with path.open("a") as handle:  # the crash cut the next line in half
        handle.write('{"v":1,"seq":5,"type":"tool_res')
    loaded = read_transcript(path)
    rebuilt = rebuild(loaded.events)
    assert rebuilt.interrupted_calls == ["t1"]
    assert rebuilt.messages[-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": INTERRUPTED_TEXT,
                "is_error": True,
            }
        ],
    }
    assert [m["role"] for m in rebuilt.messages] == ["user", "assistant", "user"]


async def test_a_resumed_session_continues_with_the_unfinished_call_answered(tmp_path):
    crashed = crashed_transcript(tmp_path / "crashed.jsonl", "s7")
    rebuilt = rebuild(read_transcript(crashed).events)
    with MessagesAPIServer([text_turn("I'll check the container's state first.")]) as api:
        session = make_session(api.url, [EchoTool()], tmp_path, resume=rebuilt)
        outcome = await session.send("where were we?")
        sent = api.requests[-1].body["messages"]
    assert outcome.text == "I'll check the container's state first."
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    result, question = sent[-1]["content"]
    assert result["tool_use_id"] == "t1" and result["is_error"]
    assert INTERRUPTED_TEXT in result["content"]
    assert question["text"] == "where were we?"
    events = read_transcript(tmp_path / "session.jsonl").events
    assert events[0].resumed_from == "s7"
    assert any(e.type == "notice" and e.kind == "resumed" for e in events)


async def test_resuming_with_an_invalid_todo_item_warns_instead_of_crashing(tmp_path):
    edited = tmp_path / "edited.jsonl"
    writer = TranscriptWriter(edited, "s8", Redactor())
    writer.write(SessionStart(model="claude-test"))
    writer.write(UserMessage(text="plan the rollout"))
    writer.write(
        TodoUpdate(
            items=[
                {"content": "stop vllm_node", "status": "completed"},
                {"content": "", "status": "pending"},
                {"content": "bring RoCE up", "status": "sideways"},
                {"task": "an item of some other shape"},
            ]
        )
    )
    writer.close()
    rebuilt = rebuild(read_transcript(edited).events)
    assert rebuilt.todo_items == [
        {"content": "stop vllm_node", "status": "completed", "note": None}
    ]
    assert [problem.split(" is not valid")[0] for problem in rebuilt.problems] == [
        "todo item 2 of the last todo update",
        "todo item 3 of the last todo update",
        "todo item 4 of the last todo update",
    ]
    assert "(content: String should have at least 1 character)" in rebuilt.problems[0]
    (tmp_path / "resumed").mkdir()
    session = make_session("http://127.0.0.1:9", [EchoTool()], tmp_path / "resumed", resume=rebuilt)
    assert session.messages[0]["role"] == "user"
    transcript = tmp_path / "resumed" / "session.jsonl"
    notices = [e for e in read_transcript(transcript).events if e.type == "notice"]
    assert [n.level for n in notices] == ["warning"] * 3
    assert "left it out of the resumed todo list" in notices[0].message


@pytest.mark.slow
def test_a_redrive_on_another_scenario_than_the_recordings_says_so(tmp_path):
    """The session start records the simulator's scenario; `replay --sim` on another warns
    (a re-drive only reads a simulator: a question worth asking, not a refusal)."""
    bundled = Path(__file__).parents[2] / "transcripts" / "sample-batch.jsonl"
    lines = bundled.read_text().splitlines()
    start = json.loads(lines[0])
    assert start["type"] == "session_start"
    recorded = tmp_path / "recorded.jsonl"
    recorded.write_text("\n".join([json.dumps({**start, "scenario": "fresh-pair"}), *lines[1:]]))
    done = scout("replay", str(recorded), "--sim", "seed-pair", home=tmp_path / "home")
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: {recorded} was recorded on scenario fresh-pair, not seed-pair: expect drift"
    ]
