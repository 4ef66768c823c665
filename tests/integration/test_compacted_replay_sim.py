"""A compacted session on the simulator, recorded through the SDK, replays with no drift.

The session probes the simulated seed pair with large outputs under tight compaction settings
(recorded in its session_start); `redrive` runs every call again on a fresh cluster, compacts
the same way, and must find nothing different. Resuming from the recording rebuilds exactly the
messages the live session held.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.loop.model_client import AnthropicClient
from agent.loop.transcript import read_transcript
from agent.replay.redrive import redrive, sim_runtime
from agent.runtime.resume import rebuild
from agent.standin.server import MessagesAPIServer

pytestmark = pytest.mark.slow

TIGHT = {
    "compact_keep_turns": 1,
    "compact_min_chars": 300,
    "compact_chunk_chars": 2_000,
    "compact_fold_after_turns": 3,
}
PROBES = ["nvidia-smi -q", "ip -d addr", "lscpu", "cat /proc/meminfo", "ibstat", "ip -s link"]
GOAL = "Take a full inventory of both Sparks."


def script() -> list[dict[str, Any]]:
    turns = []
    for number, command in enumerate(PROBES * 2):
        use = {
            "type": "tool_use",
            "id": f"toolu_{number:02d}",
            "name": "ssh_exec",
            "input": {"hosts": ["spark-a", "spark-b"], "command": command},
        }
        text = {"type": "text", "text": f"Now `{command}` on both."}
        turns.append({"turn": {"content": [text, use], "stop_reason": "tool_use"}})
    done = {"type": "text", "text": "Inventory taken."}
    return [*turns, {"turn": {"content": [done], "stop_reason": "end_turn"}}]


async def test_a_compacted_sim_session_replays_without_drift_and_resumes_exactly(tmp_path: Path):
    path = tmp_path / "compacted.jsonl"
    with MessagesAPIServer(script()) as api:
        client = AnthropicClient(api_key="test", base_url=api.url, max_retries=0)
        async with sim_runtime(
            "seed-pair",
            client=client,
            approver_factory=lambda rules: None,
            transcript_path=path,
            settings=TIGHT,
        ) as runtime:
            outcome = await runtime.session.send(GOAL)
            runtime.session.end("done")
            live = runtime.session.messages
        await client.close()
        assert {request.served for request in api.requests} == {"turn"}
    assert outcome.text == "Inventory taken."
    events = read_transcript(path).events
    edits = [e for e in events if e.type == "history_edit" and e.reason == "compaction"]
    assert edits and any(edit.folded for edit in edits)
    assert rebuild(events).messages == live

    result = await redrive(events, "seed-pair", transcript_path=tmp_path / "again.jsonl")
    assert result.report.clean, result.report.describe()
    again = read_transcript(tmp_path / "again.jsonl").events
    assert [len(e.replaced) for e in again if e.type == "history_edit"] == [
        len(e.replaced) for e in events if e.type == "history_edit"
    ]
