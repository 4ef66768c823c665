"""The local Messages API refuses what the real one refuses, through the real SDK, in its words.

One case per invariant: the request is refused with `400 invalid_request_error` and the API's
message, and no script item is used up. Then the other side: every request Scout built in the
recorded transcripts passes the same rules, sent through the SDK's count_tokens, as recorded and
compacted as hard as compaction goes.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from agent.loop.compaction import CompactionPolicy, plan_compaction
from agent.loop.history import STUB_MARK, apply_edit
from agent.loop.model_turn import TurnRequest, cached_request_params
from agent.loop.token_estimate import estimate_input_tokens
from agent.loop.transcript import read_transcript
from agent.replay.recordings import recording_names, recording_path
from agent.runtime.resume import rebuild
from agent.standin.server import MessagesAPIServer
from tools.catalog import SCOUT_TOOLS

MODEL = "claude-sonnet-4-5"
TOOL = {"name": "ssh_exec", "input_schema": {"type": "object", "properties": {}}}
USE = {"type": "tool_use", "id": "toolu_A", "name": "ssh_exec", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_A", "content": "exit 0"}


def valid_body() -> dict[str, Any]:
    return {
        "model": MODEL,
        "max_tokens": 1024,
        "tools": [copy.deepcopy(TOOL)],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Check spark-a."}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Checking."}, USE]},
            {"role": "user", "content": [dict(RESULT)]},
        ],
    }


def _unanswered(body: dict[str, Any]) -> None:
    body["messages"][2]["content"] = [{"type": "text", "text": "go on"}]


def _answered_after_text(body: dict[str, Any]) -> None:
    body["messages"][2]["content"] = [{"type": "text", "text": "here:"}, dict(RESULT)]


def _orphan_result(body: dict[str, Any]) -> None:
    body["messages"][0]["content"].insert(0, {**RESULT, "tool_use_id": "toolu_Z"})


def _duplicate_ids(body: dict[str, Any]) -> None:
    body["messages"][1]["content"].append(dict(USE))
    body["messages"][2]["content"].append(dict(RESULT))


def _empty_text(body: dict[str, Any]) -> None:
    body["messages"][1]["content"][0]["text"] = ""


def _five_breakpoints(body: dict[str, Any]) -> None:
    body["system"] = [
        {"type": "text", "text": f"part {n}", "cache_control": {"type": "ephemeral"}}
        for n in range(5)
    ]


def _bad_tool_name(body: dict[str, Any]) -> None:
    body["tools"][0]["name"] = "ssh exec!"


def _schema_not_object(body: dict[str, Any]) -> None:
    body["tools"][0]["input_schema"] = {"type": "array"}


def _max_tokens_over_limit(body: dict[str, Any]) -> None:
    body["max_tokens"] = 100_000


def _over_the_window(body: dict[str, Any]) -> None:
    body["messages"][0]["content"][0]["text"] = "x" * 820_000


CASES: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (
        _unanswered,
        r"^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately "
        r"after: toolu_A\. Each `tool_use` block must have a corresponding `tool_result` block "
        r"in the next message\.$",
    ),
    (_answered_after_text, r"^messages\.1: `tool_use` ids were found without `tool_result`"),
    (
        _orphan_result,
        r"^messages\.0\.content\.0: unexpected `tool_use_id` found in `tool_result` blocks: "
        r"toolu_Z\. Each `tool_result` block must have a corresponding `tool_use` block in the "
        r"previous message\.$",
    ),
    (_duplicate_ids, r"^messages\.1\.content\.2: `tool_use` ids must be unique$"),
    (_empty_text, r"^messages: text content blocks must be non-empty$"),
    (
        _five_breakpoints,
        r"^A maximum of 4 blocks with cache_control may be provided\. Found 5\.$",
    ),
    (
        _bad_tool_name,
        r"^tools\.0\.custom\.name: String should match pattern '\^\[a-zA-Z0-9_-\]\{1,64\}\$'$",
    ),
    (_schema_not_object, r"^tools\.0\.custom\.input_schema\.type: Input should be 'object'$"),
    (
        _max_tokens_over_limit,
        r"^max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens "
        r"for claude-sonnet-4-5$",
    ),
    (_over_the_window, r"^prompt is too long: \d+ tokens > 200000 maximum$"),
]


@pytest.fixture
def server() -> Iterator[MessagesAPIServer]:
    done = {"turn": {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}}
    with MessagesAPIServer([done], model=MODEL) as api:
        yield api


def sdk(server: MessagesAPIServer) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key="test", base_url=server.url, max_retries=0)


async def test_a_valid_request_is_answered(server: MessagesAPIServer) -> None:
    async with sdk(server) as client:
        message = await client.messages.create(**valid_body())
    assert message.content[0].text == "Done."  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("break_it", "message"), CASES, ids=[case.__name__.strip("_") for case, _ in CASES]
)
async def test_what_the_api_refuses_is_refused_in_its_words(
    server: MessagesAPIServer, break_it: Callable[[dict[str, Any]], None], message: str
) -> None:
    body = valid_body()
    break_it(body)
    async with sdk(server) as client:
        with pytest.raises(anthropic.BadRequestError) as refused:
            await client.messages.create(**body, timeout=30)  # big max_tokens needs one
    error = refused.value.body["error"]  # type: ignore[index]
    assert refused.value.status_code == 400 and error["type"] == "invalid_request_error"
    assert error == {"type": "invalid_request_error", "message": error["message"]}
    assert re.match(message, error["message"]), error["message"]
    assert server.remaining() == 1  # nothing was answered from the script
    assert server.requests[-1].served == "invalid_request"


async def test_count_tokens_answers_the_documented_estimate(server: MessagesAPIServer) -> None:
    body = valid_body()
    del body["max_tokens"]
    async with sdk(server) as client:
        counted = await client.messages.count_tokens(**body)
    assert counted.input_tokens == estimate_input_tokens(server.requests[-1].body)
    assert server.remaining() == 1


# As hard as compaction can go: every result stubbed, every old turn folded, at every turn.
SQUEEZE = CompactionPolicy(
    enabled=True, keep_turns=1, min_chars=0, chunk_chars=0, fold_after_turns=1
)


def _requests_of(path: Path, compacted: bool) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each model request the transcript recorded, rebuilt as Scout would send it."""
    events = read_transcript(path).events
    start = next(e for e in events if e.type == "session_start")
    tools = [{"name": name, "input_schema": {"type": "object"}} for name in start.tools]
    for index, event in enumerate(events):
        if event.type == "model_request":
            rebuilt = rebuild(events[:index])
            messages = rebuilt.messages
            if compacted:
                # as the runtime's builder fills it: the tools that declare approves_plan
                rebuilt.ledger.kept_whole = frozenset(
                    t.name for t in SCOUT_TOOLS if t.approves_plan
                )
                plan = plan_compaction(messages, rebuilt.ledger, SQUEEZE, force=True)
                apply_edit(messages, plan.stubs, "[Scout briefing at this turn]", plan.folded)
            request = TurnRequest(start.model, 8192, "You are Scout.", tools, messages)
            yield event.turn, cached_request_params(request)


@pytest.mark.parametrize("compacted", [False, True], ids=["as recorded", "compacted"])
@pytest.mark.parametrize("name", recording_names())
async def test_every_request_in_the_recorded_transcripts_passes(
    server: MessagesAPIServer, name: str, compacted: bool
) -> None:
    turns, stubbed = [], 0
    async with sdk(server) as client:
        with recording_path(name) as path:
            assert path is not None
            requests = list(_requests_of(path, compacted))
        for turn, body in requests:
            del body["max_tokens"]
            counted = await client.messages.count_tokens(**body)
            assert counted.input_tokens == estimate_input_tokens(body)
            turns.append(turn)
            stubbed += STUB_MARK in str(body["messages"])
    assert turns == list(range(1, len(turns) + 1)) and turns
    # as recorded: what the session sent, compacted where a long story compacted itself
    assert stubbed or not compacted
