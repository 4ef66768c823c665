"""The simulator's systemctl behind Scout's wall answers as a real host's does behind the proxy.

On a real host (tests/system/test_wall_dbus_proxy.py) a walled D-Bus client reads through the
wall's read-only D-Bus proxy and a change fails there with AccessDenied; the simulated systemctl
does the same for a walled caller (sim/fakehost/services.py), and without the proxy the closed
socket refuses it. ssh_exec asks for the proxy for every line that uses a D-Bus client.
"""

from __future__ import annotations

from pathlib import Path

from agent.safety.shell.judge import judge_shell
from tools.base import ToolContext
from tools.ssh import SSHPool
from tools.ssh_exec import SSHExec, SSHExecInput
from tools.wall import WallSpec

STATE = "systemctl is-active earlyoom"


def body(text: str) -> str:
    """A result's output, without its section line (which carries the duration)."""
    return text.split("\n", 1)[1]


async def test_walled_systemctl_reads_match_and_changes_fail_at_the_proxy(
    pool: SSHPool, tmp_path: Path
) -> None:
    tool = SSHExec(pool, judge_shell)
    walled, human = ToolContext(spill_dir=tmp_path, wall=True), ToolContext(spill_dir=tmp_path)
    state = SSHExecInput(host="spark-a", command=STATE)
    before = await tool.run(state, human)
    inside = await tool.run(state, walled)
    assert inside.meta["walled"] == {"spark-a": True}
    assert body(inside.text) == body(before.text)
    for verb in ("stop", "start", "restart"):
        change = SSHExecInput(host="spark-a", command=f"systemctl {verb} earlyoom")
        refused = await tool.run(change, walled)
        assert refused.is_error and f"Failed to {verb} earlyoom.service: Access denied" in (
            refused.text
        )
    assert body((await tool.run(state, human)).text) == body(before.text)


async def test_without_the_proxy_the_closed_socket_refuses_systemctl(pool: SSHPool) -> None:
    result = await pool.run("spark-a", STATE, timeout=30, wall=WallSpec(scratch=True))
    assert result.walled and result.exit_status != 0
    assert "Failed to connect to bus" in result.stderr
