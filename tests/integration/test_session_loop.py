"""The agent loop end to end: the real anthropic SDK streaming from the local replay server."""

from agent.loop.transcript import read_transcript
from agent.runtime.settings import Settings
from agent.standin.server import MessagesAPIServer
from tests.support.probe_tools import EchoTool, FailTool, SleepTool, WriteTool
from tests.support.session_kit import make_session, text_turn, tool_turn


def _tool_results(request) -> list[dict]:
    return request.body["messages"][-1]["content"]


async def test_three_turns_with_one_parallel_batch(tmp_path):
    echo, sleep = EchoTool(), SleepTool()
    script = [
        tool_turn(
            [
                ("toolu_1", "echo", {"txt": "wrong field"}),
                ("toolu_2", "fail", {"reason": "disk on fire"}),
                ("toolu_3", "sleep", {"seconds": 30, "timeout": 0.2}),
            ],
            text="Checking three things at once.",
        ),
        tool_turn([("toolu_4", "echo", {"text": "second round"})]),
        text_turn("All done."),
    ]
    with MessagesAPIServer(script) as server:
        session = make_session(server.url, [echo, FailTool(), sleep], tmp_path)
        outcome = await session.send("check the hosts")
        requests = [r for r in server.requests if r.path == "/v1/messages"]

    assert outcome.stop == "end_turn" and outcome.text == "All done."
    assert len(requests) == 3
    first = requests[0].body
    assert first["stream"] is True
    assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert {tool["name"] for tool in first["tools"]} >= {"echo", "fail", "sleep", "todo_write"}

    # one user message answers the whole batch: tool_results only, in call order
    second = requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    results = _tool_results(requests[1])
    assert [b["type"] for b in results] == ["tool_result"] * 3
    assert [b["tool_use_id"] for b in results] == ["toolu_1", "toolu_2", "toolu_3"]
    assert all(b.get("is_error") for b in results)
    assert "Invalid input for echo" in results[0]["content"]
    assert "disk on fire" in results[1]["content"]
    assert "timed out after 0.2 s" in results[2]["content"]
    assert echo.runs == ["second round"] and sleep.finished == 0

    third = _tool_results(requests[2])
    assert third == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_4",
            "content": "second round",
            "cache_control": {"type": "ephemeral"},
        }
    ]

    events = read_transcript(tmp_path / "session.jsonl").events
    kinds = [e.type for e in events]
    assert kinds.count("tool_call") == 4 and kinds.count("tool_result") == 4
    assert kinds.count("model_response") == 3


async def test_mid_stream_overload_is_retried_once_and_the_session_goes_on(tmp_path):
    script = [
        {"stream_error": {"type": "overloaded_error", "message": "Overloaded", "after_blocks": 0}},
        text_turn("Recovered."),
    ]
    with MessagesAPIServer(script) as server:
        session = make_session(server.url, [EchoTool()], tmp_path)
        outcome = await session.send("hello")
        posts = [r for r in server.requests if r.path == "/v1/messages"]
    assert outcome.stop == "end_turn" and outcome.text == "Recovered."
    assert len(posts) == 2
    events = read_transcript(tmp_path / "session.jsonl").events
    retries = [e for e in events if e.type == "notice" and e.kind == "retry"]
    assert len(retries) == 1
    assert retries[0].message == (
        "the model call failed (the API reported an error mid-answer: Overloaded); "
        "trying again (attempt 2)"
    )


async def test_dropped_stream_is_retried(tmp_path):
    script = [{"drop": {"after_events": 2}}, text_turn("Back.")]
    with MessagesAPIServer(script) as server:
        session = make_session(server.url, [], tmp_path)
        outcome = await session.send("hello")
    assert outcome.text == "Back."
    events = read_transcript(tmp_path / "session.jsonl").events
    (retry,) = [e.message for e in events if e.type == "notice" and e.kind == "retry"]
    assert "connection to the model API dropped" in retry and "then try again" not in retry


async def test_persistent_overload_ends_the_turn_with_a_clear_message(tmp_path):
    overloaded = {"stream_error": {"type": "overloaded_error", "message": "Overloaded"}}
    with MessagesAPIServer([overloaded] * 3) as server:
        session = make_session(server.url, [], tmp_path)
        outcome = await session.send("hello")
    assert outcome.stop == "error"
    assert "try again" in outcome.message


async def test_auth_failure_is_explained(tmp_path):
    script = [{"http_error": {"status": 401, "message": "invalid x-api-key"}}]
    with MessagesAPIServer(script) as server:
        session = make_session(server.url, [], tmp_path)
        outcome = await session.send("hello")
    assert outcome.stop == "error" and "ANTHROPIC_API_KEY" in outcome.message


async def test_tool_use_in_a_max_tokens_turn_is_not_run(tmp_path):
    write, echo = WriteTool(), EchoTool()
    script = [
        tool_turn([("toolu_1", "echo", {"text": "cut"})], stop_reason="max_tokens"),
        text_turn("Shorter now."),
    ]
    with MessagesAPIServer(script) as server:
        session = make_session(server.url, [write, echo], tmp_path)
        outcome = await session.send("go")
        assert outcome.stop == "max_tokens"
        assert "were not run" in outcome.message
        assert echo.runs == []
        # the history stays valid: the next message carries a result for the cut call
        again = await session.send("continue")
        posts = [r for r in server.requests if r.path == "/v1/messages"]
    assert again.text == "Shorter now."
    last = posts[-1].body["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result" and last[0]["is_error"] is True
    assert last[1]["type"] == "text" and last[1]["text"] == "continue"


async def test_pause_turn_is_continued_without_a_new_user_message(tmp_path):
    script = [text_turn("Working", stop_reason="pause_turn"), text_turn("Finished.")]
    with MessagesAPIServer(script) as server:
        session = make_session(server.url, [], tmp_path)
        outcome = await session.send("go")
        posts = [r for r in server.requests if r.path == "/v1/messages"]
    assert outcome.text == "Finished."
    assert posts[1].body["messages"][-1]["role"] == "assistant"


async def test_refusal_and_context_exceeded_end_the_turn(tmp_path):
    script = [
        text_turn("", stop_reason="refusal"),
        text_turn("", stop_reason="model_context_window_exceeded"),
    ]
    with MessagesAPIServer(script) as server:
        session = make_session(server.url, [], tmp_path)
        refused = await session.send("a")
        full = await session.send("b")
    assert refused.stop == "refusal" and "declined" in refused.message
    assert full.stop == "context_exceeded" and "context window" in full.message


async def test_turn_budget_ends_cleanly(tmp_path):
    loop = tool_turn([("toolu_x", "echo", {"text": "again"})])
    script = [
        loop,
        {
            "turn": {
                **loop["turn"],
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_y",
                        "name": "echo",
                        "input": {"text": "again"},
                    }
                ],
            }
        },
    ]
    with MessagesAPIServer(script) as server:
        budgets = Settings(max_turns=2).budgets()
        session = make_session(server.url, [EchoTool()], tmp_path, budgets=budgets)
        outcome = await session.send("loop forever")
    assert outcome.stop == "budget" and "2 model turns" in outcome.message


async def test_secret_in_a_tool_result_never_reaches_the_transcript_or_the_model(tmp_path):
    fake_key = "sk-ant-api03-" + "Q" * 40
    script = [
        tool_turn([("toolu_1", "echo", {"text": f"ANTHROPIC_API_KEY={fake_key}"})]),
        text_turn("ok"),
    ]
    with MessagesAPIServer(script) as server:
        session = make_session(server.url, [EchoTool()], tmp_path)
        await session.send("show env")
        posts = [r for r in server.requests if r.path == "/v1/messages"]
    raw = (tmp_path / "session.jsonl").read_text()
    assert fake_key not in raw and "[REDACTED]" in raw
    result = posts[-1].body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    assert fake_key not in result["content"] and "[REDACTED]" in result["content"]


async def test_todo_write_updates_the_list_and_the_transcript(tmp_path):
    items = [
        {"content": "recon both hosts", "status": "in_progress"},
        {"content": "write a plan", "status": "pending"},
    ]
    script = [tool_turn([("toolu_1", "todo_write", {"items": items})]), text_turn("Planned.")]
    with MessagesAPIServer(script) as server:
        session = make_session(server.url, [], tmp_path)
        await session.send("plan")
        posts = [r for r in server.requests if r.path == "/v1/messages"]
    assert [item.content for item in session.todo.items] == ["recon both hosts", "write a plan"]
    assert "[>] recon both hosts" in posts[-1].body["messages"][-1]["content"][0]["content"]
    events = read_transcript(tmp_path / "session.jsonl").events
    assert any(e.type == "todo_update" and len(e.items) == 2 for e in events)


async def test_two_items_in_progress_is_rejected_with_a_reason(tmp_path):
    items = [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}]
    script = [tool_turn([("toolu_1", "todo_write", {"items": items})]), text_turn("ok")]
    with MessagesAPIServer(script) as server:
        session = make_session(server.url, [], tmp_path)
        await session.send("plan")
        posts = [r for r in server.requests if r.path == "/v1/messages"]
    result = posts[-1].body["messages"][-1]["content"][0]
    assert result["is_error"] and "mark at most one" in result["content"]
    assert session.todo.items == []
