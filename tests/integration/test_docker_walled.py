"""The simulator's docker behind Scout's wall answers as a real host's does behind the proxy.

On a real host (tests/system/test_wall_docker_proxy.py) a walled docker read goes through the
wall's read-only proxy and a change fails there with its reason; the simulated engine does the
same for a walled caller (sim/fakehost/docker_walled.py), and without the proxy the closed
socket refuses the client.
"""

from __future__ import annotations

from pathlib import Path

from agent.safety.shell.judge import judge_shell
from tools.base import ToolContext
from tools.ssh import SSHPool
from tools.ssh_exec import SSHExec, SSHExecInput
from tools.wall import WallSpec

LISTING = "docker ps -a --format '{{.Names}} {{.Image}} {{.State}}'"
REFUSED = "refused by the wall's read-only docker proxy"


def body(text: str) -> str:
    """A result's output, without its section line (which carries the duration)."""
    return text.split("\n", 1)[1]


async def test_walled_docker_reads_match_and_changes_fail_at_the_proxy(
    pool: SSHPool, tmp_path: Path
) -> None:
    tool = SSHExec(pool, judge_shell)
    walled, human = ToolContext(spill_dir=tmp_path, wall=True), ToolContext(spill_dir=tmp_path)
    listing = SSHExecInput(host="spark-a", command=LISTING)
    before = await tool.run(listing, human)
    inside = await tool.run(listing, walled)
    assert inside.meta["walled"] == {"spark-a": True} and not inside.is_error
    assert body(inside.text) == body(before.text) and "vllm_node" in body(inside.text)
    for change in ("docker run -d --name scoutwall-sim busybox sleep 60", "docker logs -f x"):
        refused = await tool.run(SSHExecInput(host="spark-a", command=change), walled)
        assert refused.is_error and REFUSED in refused.text, refused.text
    assert body((await tool.run(listing, human)).text) == body(before.text)


async def test_without_the_proxy_the_closed_socket_refuses_docker(pool: SSHPool) -> None:
    result = await pool.run("spark-a", "docker ps", timeout=30, wall=WallSpec(scratch=True))
    assert result.walled and result.exit_status != 0
    assert "permission denied" in result.stderr and "docker.sock" in result.stderr
