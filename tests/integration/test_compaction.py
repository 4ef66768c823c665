"""Long sessions through the real SDK and the strict local API: compaction, resume, replay.

Every request here passes agent/loop/request_rules.py (the server refuses anything else), so
these tests also show that a compacted history is one the real API accepts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent.loop.compaction import CompactionPolicy, is_stub
from agent.loop.history import BRIEFING_MARK, result_blocks, text_of
from agent.loop.transcript import read_transcript
from agent.replay.client import ReplayClient
from agent.runtime.builder import build_session, open_recorder
from agent.runtime.resume import rebuild
from agent.safety.redact import Redactor
from agent.standin.server import MessagesAPIServer
from tests.support.session_kit import make_session, text_turn, tool_turn
from tools.base import Tool, ToolContext, ToolResult

POLICY = CompactionPolicy(
    enabled=True, keep_turns=2, min_chars=1_000, chunk_chars=6_000, fold_after_turns=4
)


class RunInput(BaseModel):
    host: str
    lines: int = 120
    exit: int = 0


class RunTool(Tool[RunInput]):
    """A command on a host: as many lines of output as asked, then its exit status."""

    name = "run"
    description = "Run the check on a host."
    Input = RunInput

    def hosts(self, params: RunInput) -> list[str]:
        return [params.host]

    def summary(self, params: RunInput) -> str:
        return f"check --lines {params.lines}"

    async def run(self, params: RunInput, ctx: ToolContext) -> ToolResult:
        lines = [f"{params.host}: line {n} of the check's output" for n in range(params.lines)]
        if params.exit:
            lines.append("Error: port 8000 is already in use by vllm_node")
        text = "\n".join([*lines, f"exit {params.exit}"])
        return ToolResult(text=text, is_error=params.exit != 0, meta={"exit_status": params.exit})


def run_turn(call_id: str, host: str = "spark-a", **params: Any) -> dict[str, Any]:
    return tool_turn([(call_id, "run", {"host": host, **params})], text=f"Checking {host}.")


def stripped(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A request's messages without the cache markers the client adds."""
    return [
        {
            **message,
            "content": [
                {key: value for key, value in block.items() if key != "cache_control"}
                for block in message["content"]
            ],
        }
        for message in messages
    ]


async def test_a_long_session_compacts_in_chunks_and_resume_rebuilds_the_same_messages(tmp_path):
    script = [run_turn(f"toolu_{n:02d}") for n in range(1, 13)] + [text_turn("All checked.")]
    with MessagesAPIServer(script) as server:
        session = make_session(server.url, [RunTool()], tmp_path, compaction=POLICY)
        outcome = await session.send("Check spark-a twelve times.")
        session.end("done")
    assert outcome.stop == "end_turn"
    assert {request.served for request in server.requests} == {"turn"}  # nothing refused

    events = read_transcript(tmp_path / "session.jsonl").events
    edits = [e for e in events if e.type == "history_edit" and e.reason == "compaction"]
    assert 1 <= len(edits) < 6  # in chunks, not every turn
    assert any(edit.folded for edit in edits)
    last = stripped(server.requests[-1].body["messages"])
    assert last[0]["content"] == [{"type": "text", "text": "Check spark-a twelve times."}]
    blocks = result_blocks(last)
    stubbed = [key for key, block in blocks.items() if is_stub(text_of(block))]
    assert "toolu_01" not in blocks  # folded away with its call
    assert stubbed and "toolu_12" not in stubbed and "toolu_11" not in stubbed
    assert text_of(blocks["toolu_12"]).endswith("exit 0")
    holder = next(m for m in last if any(b.get("tool_use_id") == stubbed[-1] for b in m["content"]))
    briefing = holder["content"][-1]["text"]  # right after the newest compacted result
    assert briefing.startswith(BRIEFING_MARK) and str(last).count(BRIEFING_MARK) == 1
    folded = [call_id for edit in edits for call_id in edit.folded]
    # the same check folded again and again is one line: how often, and the id recall_result takes
    line = f"- run on spark-a `check --lines 120` → exit 0 ({len(folded)}×, newest {folded[-1]})"
    assert len(folded) > 1 and line in briefing.splitlines()

    assert rebuild(events).messages == session.messages  # resume sends what live would
    assert session.usage.compacted.tokens_not_sent > 0


async def test_a_result_the_model_is_about_to_act_on_is_never_compacted(tmp_path):
    script = [
        run_turn("toolu_fail", exit=1),
        *(run_turn(f"toolu_b{n}", host="spark-b") for n in range(1, 6)),
        run_turn("toolu_retry", exit=0),  # the model acts on the failure: same check, spark-a
        run_turn("toolu_b6", host="spark-b"),
        run_turn("toolu_b7", host="spark-b"),
        run_turn("toolu_b8", host="spark-b"),
        text_turn("spark-a's port is free now."),
    ]
    stubs_only = CompactionPolicy(enabled=True, keep_turns=2, min_chars=1_000, chunk_chars=6_000)
    with MessagesAPIServer(script) as server:
        session = make_session(server.url, [RunTool()], tmp_path, compaction=stubs_only)
        await session.send("Check both hosts.")
    failure_seen = []
    for request in server.requests[1:]:
        blocks = result_blocks(request.body["messages"])
        failure_seen.append(text_of(blocks["toolu_fail"]))
    retried_at = next(
        i for i, r in enumerate(server.requests) if "toolu_retry" in str(r.body["messages"])
    )
    whole = failure_seen[: retried_at - 1]
    assert len(whole) >= 5 and all(t.endswith("already in use by vllm_node\nexit 1") for t in whole)
    assert any(
        is_stub(text_of(b)) for b in result_blocks(server.requests[5].body["messages"]).values()
    )
    assert is_stub(failure_seen[-1]) and "→ exit 1;" in failure_seen[-1]  # answered, then compacted


def _replay(events: list[Any], tmp_path: Path, policy: CompactionPolicy) -> ReplayClient:
    client = ReplayClient(events)
    session = build_session(
        open_recorder(None, Redactor()),
        client=client,
        tools=[RunTool()],
        context=ToolContext(spill_dir=tmp_path / "replay-spill"),
        system_prompt="You are a test agent.",
        model="claude-test",
        redactor=Redactor(),
        compaction=policy,
    )
    return client, session


async def test_a_compacted_session_replays_without_drift_unless_it_compacts_differently(tmp_path):
    script = [run_turn(f"toolu_{n:02d}") for n in range(1, 8)] + [text_turn("Done.")]
    with MessagesAPIServer(script) as server:
        session = make_session(server.url, [RunTool()], tmp_path, compaction=POLICY)
        await session.send("Check spark-a seven times.")
    events = read_transcript(tmp_path / "session.jsonl").events
    assert any(e.type == "history_edit" for e in events)

    client, replayed = _replay(events, tmp_path, POLICY)
    outcome = await replayed.send("Check spark-a seven times.")
    assert outcome.text == "Done." and client.drift == [] and client.remaining == 0
    assert replayed.messages == session.messages

    never = CompactionPolicy(enabled=False, keep_turns=2, min_chars=1_000, chunk_chars=6_000)
    client, replayed = _replay(events, tmp_path, never)
    await replayed.send("Check spark-a seven times.")
    assert client.drift and "-compacted results" in client.drift[0].diff


async def test_a_prompt_over_the_window_is_compacted_whole_and_sent_again(tmp_path):
    big = {"lines": 7_000}  # ~290k characters per result, ~73k tokens
    script = [run_turn(f"toolu_{n}", **big) for n in range(1, 4)] + [text_turn("Read them all.")]
    lazy = CompactionPolicy(enabled=True, keep_turns=1, min_chars=1_000, chunk_chars=10**9)
    with MessagesAPIServer(script) as server:
        session = make_session(
            server.url, [RunTool()], tmp_path, compaction=lazy, batch_budget_chars=400_000
        )
        outcome = await session.send("Dump the logs of spark-a three times.")
    assert outcome.stop == "end_turn" and outcome.text == "Read them all."
    served = [request.served for request in server.requests]
    assert served == ["turn", "turn", "turn", "invalid_request", "turn"]
    events = read_transcript(tmp_path / "session.jsonl").events
    (edit,) = [e for e in events if e.type == "history_edit"]
    assert sorted(edit.replaced) == ["toolu_1", "toolu_2"]
    assert rebuild(events).messages == session.messages


async def test_a_wide_batch_stays_within_the_turns_budget_and_the_transcript_keeps_it_all(
    tmp_path,
):
    calls = [(f"toolu_{n:02d}", "run", {"host": f"node-{n}", "lines": 100}) for n in range(12)]
    script = [tool_turn(calls), text_turn("Twelve answers.")]
    with MessagesAPIServer(script) as server:
        session = make_session(server.url, [RunTool()], tmp_path, batch_budget_chars=20_000)
        await session.send("Check all twelve nodes.")
    results = server.requests[1].body["messages"][-1]["content"]
    assert len(results) == 12
    assert sum(len(text_of(block)) for block in results) <= 20_000
    assert all(text_of(block).startswith("[this turn's 12 results share") for block in results)
    events = read_transcript(tmp_path / "session.jsonl").events
    full = [e.text for e in events if e.type == "tool_result"]
    assert len(full) == 12 and all(text.endswith("exit 0") for text in full)
    assert rebuild(events).messages[:3] == stripped(server.requests[1].body["messages"])
