"""`scout chat` at 80 and 120 columns: an approval prompt stays on screen, untouched, until it is
answered, even while other calls of its batch finish; no running/queued row is left behind."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from agent.standin.server import MessagesAPIServer
from sim.cluster import SimCluster
from tests.support.session_kit import text_turn, tool_turn
from tests.support.tmux import TmuxScreen, tmux_missing

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(tmux_missing() is not None, reason=tmux_missing() or ""),
]

PLAN = {
    "goal": "bring the worker's RoCE link up",
    "steps": [
        {
            "title": "bring enp1s0f1np1 up on spark-b",
            "hosts": ["spark-b"],
            "actions": ["sudo ip link set enp1s0f1np1 up"],
            "expected_downtime": "none",
            "rollback": "sudo ip link set enp1s0f1np1 down",
            "success_check": "ibdev2netdev shows rocep1s0f1 (Up)",
        }
    ],
}
TODO = [{"content": "Bring the worker's RoCE link up", "status": "in_progress"}]
SLOW = {"host": "spark-a", "command": "sleep 2"}  # read-only: runs while the prompt waits
SCRIPT = [
    tool_turn(
        [
            ("toolu_1", "todo_write", {"items": TODO}),
            ("toolu_2", "propose_plan", PLAN),
            ("toolu_3", "ssh_exec", SLOW),
        ],
        text="A plan first.",
    ),
    tool_turn(
        [
            ("toolu_4", "ssh_exec", {"host": "spark-b", "command": PLAN["steps"][0]["actions"][0]}),
            ("toolu_5", "ssh_exec", SLOW),
            ("toolu_6", "todo_write", {"items": TODO}),
        ]
    ),
    text_turn("The link is up."),
]
PLAN_PROMPT = "approve? [y]es / [s]teps too / [n]o / [e]dit / [c]ommands ›"
STEP_PROMPT = "approve? [y]es once / [n]o / [e]dit / [a]llow exactly this ›"
STALE_ROW = re.compile(r"\b(running|queued)\s*$")


async def _result_recorded(home: Path, call_id: str, timeout: float = 30.0) -> None:
    """Wait until the transcript holds the result of `call_id` (the call has finished)."""
    needle = f'"type":"tool_result","id":"{call_id}"'
    for _ in range(int(timeout * 10)):
        if any(needle in path.read_text() for path in (home / "transcripts").glob("*.jsonl")):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{call_id} never finished")


async def _prompt_stays(screen: TmuxScreen, home: Path, prompt: str, sibling: str) -> None:
    """The prompt is the last line shown, before and after a sibling call finishes."""
    await screen.wait_for(prompt)
    await _result_recorded(home, sibling)
    await asyncio.sleep(0.5)  # a redraw would come within a frame or two
    shown = screen.visible()
    assert shown[-1].strip() == prompt, "\n".join(shown)
    assert not [line for line in shown if STALE_ROW.search(line)], "\n".join(shown)


@pytest.mark.parametrize("width", [80, 120])
async def test_the_approval_prompt_stays_until_answered(tmp_path: Path, width: int) -> None:
    home = tmp_path / "home"
    async with SimCluster("seed-pair", tmp_path / "sim") as sim:
        inventory = sim.write_inventory(tmp_path / "sim" / "inventory.yaml")
        with MessagesAPIServer(SCRIPT) as api:
            screen = TmuxScreen(tmp_path / "tmux.sock", width=width, height=40)
            screen.start_chat(home, api.url, inventory)
            try:
                await screen.wait_for("scout ›")
                screen.send("fix the worker's link", "Enter")
                await _prompt_stays(screen, home, PLAN_PROMPT, "toolu_3")
                screen.send("y", "Enter")
                await _prompt_stays(screen, home, STEP_PROMPT, "toolu_5")
                screen.send("y", "Enter")
                await screen.wait_for("The link is up.")
                await screen.wait_for("scout ›", after=screen.screen().index("The link is up."))
                everything = screen.screen().splitlines()
                assert not [line for line in everything if STALE_ROW.search(line)]
                assert len([line for line in everything if "sleep 2" in line]) == 2
                assert all("exit 0" in line for line in everything if "sleep 2" in line)
                # plurals: not `1 steps`, `1 items`
                assert "propose_plan: 1 step on spark-b" in "\n".join(everything)
                assert " 1 item " in "\n".join(everything) and "1 items" not in "\n".join(
                    everything
                )
            finally:
                screen.kill()
