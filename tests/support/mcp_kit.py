"""Driving `scout mcp` as an MCP host does: the real SDK client (`mcp` 2.3) over stdio against
the `scout` command in its own process, SCOUT_HOME in a test folder.

The scripted host makes the bundled fresh-pair story's tool calls, in the order the recording
made them (its own bookkeeping, todo_write, left out: a host keeps its own), and comes back
with the approval id whenever Scout answers approval_pending.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.types import Implementation

from tests.support.story_script import calls_of, story_script
from tests.support.waiting import WAIT_S

SCOUT = str(Path(sys.executable).with_name("scout"))
ROOT = Path(__file__).resolve().parents[2]
NOT_SERVED = {"todo_write", "recall_result"}
STATE_CHANGING = {"mutating", "destructive"}


def story_calls() -> list[tuple[str, dict[str, Any]]]:
    """The recorded story's calls, in order, as (tool, input)."""
    return [
        (call["name"], call["input"])
        for item in story_script()
        for call in calls_of(item)
        if call["name"] not in NOT_SERVED
    ]


def scout_mcp(
    home: Path, *args: str, env: dict[str, str] | None = None, elicitation: Any = None
) -> Client:
    """An SDK client that starts `scout mcp ARGS` on stdio."""
    params = StdioServerParameters(
        command=SCOUT,
        args=["mcp", *args],
        env={**os.environ, "SCOUT_HOME": str(home), "NO_COLOR": "1", **(env or {})},
        cwd=str(ROOT),
    )
    host = Implementation(name="scripted-host", version="1.0")
    return Client(params, client_info=host, elicitation_callback=elicitation)


def status(result: Any) -> str:
    return (result.structured_content or {}).get("status", "")


async def until_decided(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    """Call; while Scout says approval_pending, call again with the approval id (for up to
    WAIT_S, which only bounds a hang)."""
    result = await client.call_tool(name, arguments)
    deadline = time.monotonic() + WAIT_S
    while status(result) == "approval_pending":
        approval = result.structured_content["approval_id"]
        if time.monotonic() > deadline:
            raise AssertionError(f"{name} still waits for approval {approval}")
        await asyncio.sleep(0.1)
        result = await client.call_tool(name, {**arguments, "approval_id": approval})
    return result


def transcript_events(home: Path) -> list[dict[str, Any]]:
    """The events of the one MCP session recorded under `home`."""
    [path] = (home / "transcripts").glob("mcp-*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def ran_state_changes(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The state-changing calls that ran (their result is no refusal)."""
    risky = {e["id"] for e in events if e["type"] == "tool_call" and e["risk"] in STATE_CHANGING}
    return [
        e
        for e in events
        if e["type"] == "tool_result" and e["id"] in risky and not e["meta"].get("gated")
    ]


def at_a_terminal(home: Path, *args: str, answers: list[str]) -> str:
    """`scout ARGS` on a pseudo-terminal, as a person runs it: each answer typed when the
    command asks (a prompt ends in ›); returns what the terminal showed."""
    main, child = os.openpty()
    env = {**os.environ, "SCOUT_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "120"}
    process = subprocess.Popen(
        [SCOUT, *args], stdin=child, stdout=child, stderr=child, env=env, cwd=ROOT
    )
    os.close(child)
    shown, pending = b"", list(answers)
    try:
        while True:
            ready, _, _ = select.select([main], [], [], 0.5)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the terminal closed with the command
                break
            if not chunk:
                break
            shown += chunk
            if pending and shown.rstrip().endswith("›".encode()):
                os.write(main, pending.pop(0).encode() + b"\n")
    finally:
        process.wait(timeout=60)
        os.close(main)
    return shown.decode(errors="replace")
