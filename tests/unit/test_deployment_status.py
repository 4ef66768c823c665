"""`deployment_status`, the tool the model calls for what `scout status` shows: the agent's own
reader of the records (agent/daytwo/status.py) lent to it, its states and problems as text and
data. The hosts' side is tested with `scout status` on the simulator (test_daytwo_sim.py)."""

from __future__ import annotations

from pathlib import Path

from agent.daytwo.status import deployment_reader
from tools.base import ToolContext
from tools.deployment_status import DeploymentStatusInput, DeploymentStatusTool
from tools.risk.assessment import Risk
from tools.ssh import Inventory, SSHPool


def tool_over(folder: Path, tmp_path: Path) -> tuple[DeploymentStatusTool, SSHPool]:
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("hosts:\n  spark-a: {address: 127.0.0.1, port: 1}\n")
    pool = SSHPool(Inventory.load(inventory))
    return DeploymentStatusTool(deployment_reader(folder)(pool)), pool


async def test_no_record_yet_is_said_plainly_and_it_only_reads(tmp_path):
    tool, pool = tool_over(tmp_path / "deployments", tmp_path)
    params = DeploymentStatusInput()
    assert tool.risk(params).risk == Risk.READ_ONLY
    result = await tool.run(params, ToolContext(spill_dir=tmp_path / "spill"))
    await pool.close()
    assert not result.is_error
    assert result.text == "No deployment is recorded yet: a proven rollout records one."
    assert result.data == {"deployments": [], "troubled": []}


async def test_an_unreadable_record_and_an_unknown_name_are_named(tmp_path):
    folder = tmp_path / "deployments"
    folder.mkdir()
    (folder / "broken.json").write_text("{not json")
    tool, pool = tool_over(folder, tmp_path)
    result = await tool.run(
        DeploymentStatusInput(name="spark-a:9999"), ToolContext(spill_dir=tmp_path / "spill")
    )
    await pool.close()
    assert result.is_error
    lines = result.text.splitlines()
    assert lines[0].startswith(f"warning: {folder / 'broken.json'}: not a deployment record")
    assert lines[1] == "warning: no deployment record named 'spark-a:9999' (known: none)"
