"""`scout demo` in a real terminal: Ctrl-C mid-batch, and a denial the recording cannot follow."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

from agent.loop.events import ModelRequest, ModelResponse, SessionStart, UserMessage
from tests.support.processes import process_tree, survivors
from tests.support.tmux import TmuxScreen, tmux_missing
from tests.support.waiting import until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(tmux_missing() is not None, reason=tmux_missing() or ""),
]

SCOUT = f"{os.path.dirname(sys.executable)}/scout"
# A nested timeout, as the demo's own health wait has: GNU timeout takes a process group of its own
NESTED = "timeout 600 sh -c 'sleep 317; true'"
STALE_ROW = re.compile(r"\b(running|queued)\s*$")


def write_long_call_recording(path: Path) -> None:
    """A recorded session whose one call waits long on the head, to be interrupted there."""
    ask = "wait on the head"
    call = {"type": "tool_use", "id": "toolu_1", "name": "ssh_exec"}
    call["input"] = {"host": "spark-a", "command": NESTED}
    usage = {"input_tokens": 10, "output_tokens": 5}
    events = [
        SessionStart(model="claude-replay", mode="ask", goal=ask),
        UserMessage(text=ask),
        ModelRequest(
            turn=1, digest="-", message_count=1, last_user=[{"type": "text", "text": ask}]
        ),
        ModelResponse(turn=1, content=[call], stop_reason="tool_use", usage=usage),
        ModelRequest(turn=2, digest="-", message_count=3),
        ModelResponse(
            turn=2, content=[{"type": "text", "text": "Done."}], stop_reason="end_turn", usage=usage
        ),
    ]
    path.write_text("".join(event.model_dump_json() + "\n" for event in events))


def start(screen: TmuxScreen, home: Path, args: str) -> None:
    env = f"SCOUT_HOME={home} NO_COLOR=1"
    screen.start(f'env {env} {SCOUT} demo {args}; echo "exit=$?"; sleep 60')


async def demo_processes(screen: TmuxScreen, prefix: str) -> dict[int, str]:
    """The demo's process tree, once one of its processes runs a command starting with `prefix`."""

    def running() -> dict[int, str]:
        tree = process_tree(screen.pane_pid())
        return tree if any(line.startswith(prefix) for line in tree.values()) else {}

    tree = await until(running, f"{prefix!r} to run")
    return {pid: line for pid, line in tree.items() if line != "sleep 60"}


async def test_ctrl_c_mid_batch_stops_the_demo_and_everything_it_started(tmp_path: Path) -> None:
    recording = tmp_path / "long-call.jsonl"
    write_long_call_recording(recording)
    screen = TmuxScreen(tmp_path / "tmux.sock", width=100, height=40)
    start(screen, tmp_path / "home", f"--transcript {recording}")
    try:
        tree = await demo_processes(screen, "/usr/bin/timeout 600 sh -c sleep 317")
        screen.send("C-c")
        shown = await screen.wait_for("exit=")
        assert "exit=130" in shown, shown
        assert "Stopped (Ctrl-C)" in shown
        for noise in ("Traceback", "Exception ignored", "Event loop is closed", "RuntimeError"):
            assert noise not in shown, shown
        # killed processes are reaped by their new parent, not at once
        await until(lambda: not survivors(tree), f"no survivors of {tree}")
    finally:
        screen.kill()


async def prompt_stays(screen: TmuxScreen, prompt: str, after: int) -> None:
    """The prompt is the last line shown and stays so while the rest of its batch goes on."""
    await screen.wait_for(prompt, after=after)
    for _ in range(10):
        shown = screen.visible()
        assert shown[-1].strip() == prompt, "\n".join(shown)
        assert not [line for line in shown if STALE_ROW.search(line)], "\n".join(shown)
        await asyncio.sleep(0.2)


@pytest.mark.parametrize("width", [80, 120])
async def test_a_denial_stops_the_story_there_and_says_so(tmp_path: Path, width: int) -> None:
    screen = TmuxScreen(tmp_path / "tmux.sock", width=width, height=50)
    start(screen, tmp_path / "home", "--interactive --fast")
    try:
        await prompt_stays(
            screen, "approve? [y]es / [s]teps too / [n]o / [e]dit / [c]ommands ›", after=0
        )  # the plan
        mark = len(screen.screen().rstrip())
        screen.send("y", "Enter")
        await screen.wait_for("$ docker stop vllm_node", after=mark)
        await prompt_stays(
            screen, "approve? [y]es once / [n]o / [e]dit / [a]llow exactly this ›", after=mark
        )
        screen.send("n", "Enter")
        await screen.wait_for("tell the agent why (optional) ›", after=mark)
        screen.send("Enter")
        shown = await screen.wait_for("exit=")
        assert "exit=2" in shown, shown
        story = " ".join(shown[mark:].split())
        assert "You denied rollout_step on spark-a." in story  # step 1: docker stop vllm_node
        assert "a recording cannot follow another answer, so the story stops here" in story
        assert "nothing after this point ran" in story
        assert "Step 1 is proven" not in story  # never claims what did not happen
        assert story.count("approve?") == 1  # the rest of the batch is not offered any more
        assert "Traceback" not in shown
        assert not [line for line in shown.splitlines() if STALE_ROW.search(line)]
    finally:
        screen.kill()
