"""A bundled story's own model turns as a replay-server script, and deviations from it.

The turns come from the recording itself (agent.replay.client.recorded_turns), so a test that
drives a session with them follows the story as recorded, not a retyped copy of it.
"""

from __future__ import annotations

import copy
from typing import Any

from agent.loop.transcript import read_transcript
from agent.replay.client import recorded_turns
from agent.replay.recordings import recording_path

FRESH_PAIR = "fresh-pair-deploy"


def story_script(name: str = FRESH_PAIR) -> list[dict[str, Any]]:
    """The recording's model turns, in order, as replay-server script items."""
    with recording_path(name) as path:
        assert path is not None, name
        events = read_transcript(path).events
    responses = [t.response for t in recorded_turns(events) if t.response is not None]
    return [
        {"turn": {"content": copy.deepcopy(r.content), "stop_reason": r.stop_reason}}
        for r in responses
    ]


def calls_of(item: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_use blocks of one script item."""
    return [b for b in item["turn"]["content"] if b.get("type") == "tool_use"]


def turn_index(script: list[dict[str, Any]], name: str, **fields: Any) -> int:
    """The position of the first turn that calls `name` with these input fields."""
    return next(
        n
        for n, item in enumerate(script)
        if any(
            c["name"] == name and all(c["input"].get(k) == v for k, v in fields.items())
            for c in calls_of(item)
        )
    )


def call_id(script: list[dict[str, Any]], name: str, **fields: Any) -> str:
    """The tool_use id of the first call of `name` with these input fields."""
    item = script[turn_index(script, name, **fields)]
    return next(
        c["id"]
        for c in calls_of(item)
        if c["name"] == name and all(c["input"].get(k) == v for k, v in fields.items())
    )


def tool_use_turn(calls: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    """A script item that makes exactly these calls."""
    content = [
        {"type": "tool_use", "id": cid, "name": name, "input": params}
        for cid, name, params in calls
    ]
    return {"turn": {"content": content, "stop_reason": "tool_use"}}
