"""`scout chat` in a real terminal (tmux): a person types, watches batches, approves, cancels."""

import subprocess

import pytest

from agent.standin.server import MessagesAPIServer
from sim.cluster import SimCluster
from tests.support.session_kit import text_turn, tool_turn
from tests.support.tmux import TmuxScreen, tmux_missing
from tests.support.waiting import until

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
TODO = [
    {"content": "Recon both Sparks", "status": "completed"},
    {"content": "Bring the worker's RoCE link up", "status": "in_progress"},
]
SCRIPT = [
    tool_turn(
        [
            ("toolu_1", "todo_write", {"items": TODO}),
            ("toolu_2", "ssh_exec", {"hosts": ["spark-a", "spark-b"], "command": "nvidia-smi -L"}),
        ],
        text="Looking at both GPUs first.",
    ),
    tool_turn([("toolu_3", "propose_plan", PLAN)]),
    tool_turn(
        [("toolu_4", "ssh_exec", {"host": "spark-b", "command": PLAN["steps"][0]["actions"][0]})]
    ),
    text_turn("The worker's RoCE link is up now."),
    tool_turn([("toolu_5", "ssh_exec", {"host": "spark-a", "command": "sleep 307"})]),
]


def remote_sleeps() -> list[str]:
    found = subprocess.run(["pgrep", "-af", "sleep 307"], capture_output=True, text=True)
    return [line for line in found.stdout.splitlines() if "pgrep" not in line]


async def test_a_person_chats_approves_and_cancels(tmp_path):
    async with SimCluster("seed-pair", tmp_path / "sim") as sim:
        inventory = sim.write_inventory(tmp_path / "sim" / "inventory.yaml")
        with MessagesAPIServer(SCRIPT) as api:
            screen = TmuxScreen(tmp_path / "tmux.sock", width=80, height=40)
            screen.start_chat(tmp_path / "home", api.url, inventory)
            try:
                await screen.wait_for("scout ›")
                screen.send("check the GPUs and fix the worker's link", "Enter")
                # the batch panel: one line per call, hosts and the command
                shown = await screen.wait_for("nvidia-smi -L")
                assert "spark-a +1" in shown and "ssh_exec" in shown
                # the todo panel
                shown = await screen.wait_for("Bring the worker's RoCE link up")
                assert "Recon both Sparks" in shown
                # the plan asks first, then the step
                await screen.wait_for("approve?")
                mark = len(screen.screen().rstrip())
                screen.send("y", "Enter")
                shown = await screen.wait_for("serves: step 1", after=mark)
                assert "$ sudo ip link set enp1s0f1np1 up" in shown[mark:]
                assert "risk: mutating" in shown[mark:]
                screen.send("y", "Enter")
                await screen.wait_for("link is up now")
                assert sim.host_state("spark-b")  # the sim is still answering
                # a long command, cancelled with Ctrl-C
                screen.send("now wait on the head", "Enter")
                await screen.wait_for("sleep 307")
                await until(remote_sleeps, "the remote command to start")
                screen.send("C-c")
                await screen.wait_for("Stopped the running batch")
                await until(lambda: not remote_sleeps(), "the remote command to end")
                screen.send("C-d")
                await screen.wait_for("transcript saved")
            finally:
                screen.kill()
