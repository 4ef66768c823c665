"""The wall on the simulator: its hosts run Scout's own helper, and honour it as a real host does.

Reads run unasked inside the wall; a host whose kernel has no Landlock (the `no-landlock`
scenario's worker) runs the probe pack without it, says why, and narrows ssh_exec there to
exact read shapes (anything else asks).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.faces.doctor import run_checks
from agent.faces.exec_one import EXIT_NOT_RUN, exec_one
from agent.runtime.settings import Settings
from agent.safety.shell.judge import judge_shell
from agent.world.model import WorldModel
from sim.cluster import SimCluster
from tools.base import ToolContext
from tools.recon_tool import ReconInput, ReconTool
from tools.risk.assessment import Risk
from tools.ssh import SSHPool
from tools.ssh_exec import SSHExec, SSHExecInput
from tools.wall import HostWalls


def settings_for(cluster: SimCluster, tmp_path: Path, mode: str) -> Settings:
    inventory = cluster.write_inventory(tmp_path / "inv" / "inventory.yaml")
    return Settings(
        inventory=inventory, mode=mode, transcripts_dir=tmp_path / "t", log_file=tmp_path / "log"
    )


async def test_a_read_no_human_approved_runs_inside_the_wall(pool: SSHPool, tmp_path: Path) -> None:
    tool = SSHExec(pool, judge_shell)
    walled = ToolContext(spill_dir=tmp_path, wall=True)
    params = SSHExecInput(host="spark-a", command="echo hi > note.txt; nvidia-smi -L")
    result = await tool.run(params, walled)
    assert result.meta["walled"] == {"spark-a": True}
    assert "Permission denied" in result.text and "NVIDIA GB10" in result.text
    changed = SSHExecInput(host="spark-b", command="sudo -n ip link set enp1s0f1np1 up")
    result = await tool.run(changed, walled)
    assert "Operation not permitted" in result.text and result.is_error
    unwalled = await tool.run(
        SSHExecInput(host="spark-a", command="test -e note.txt"),
        ToolContext(spill_dir=tmp_path),
    )
    assert unwalled.meta["walled"] == {"spark-a": False} and unwalled.is_error  # never written


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["no-landlock"], indirect=True)
async def test_a_host_without_landlock_narrows_what_runs_unasked(
    pool: SSHPool, tmp_path: Path
) -> None:
    walls = HostWalls()
    ctx = ToolContext(spill_dir=tmp_path, world=WorldModel(), wall=True)
    result = await ReconTool(pool, walls).run(ReconInput(), ctx)
    facts = result.data["hosts"]
    assert facts["spark-a"]["wall"]["inside"] is True
    assert facts["spark-b"]["wall"]["inside"] is False
    assert "no Landlock" in facts["spark-b"]["wall"]["detail"]
    assert facts["spark-b"]["gpu"]["gpus"]  # the probe pack still read the worker
    assert "reads on spark-b cannot run inside the wall" in result.text
    [finding] = [f for f in result.data["findings"] if f["check"] == "wall"]
    assert (finding["kind"], finding["hosts"]) == ("reads_unwalled", ["spark-b"])
    tool = SSHExec(pool, judge_shell, walls)
    shape = tool.risk(SSHExecInput(host="spark-b", command="nvidia-smi -L"))
    other = tool.risk(SSHExecInput(host="spark-b", command="nvidia-smi -L | head -1"))
    walled_host = tool.risk(SSHExecInput(host="spark-a", command="nvidia-smi -L | head -1"))
    assert (shape.risk, other.risk, walled_host.risk) == (
        Risk.READ_ONLY,
        Risk.MUTATING,
        Risk.READ_ONLY,
    )
    assert "spark-b cannot wall reads" in other.reason


async def test_scout_exec_runs_a_read_inside_the_wall_and_refuses_a_change_in_ci(
    cluster: SimCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = settings_for(cluster, tmp_path, "ci")
    read, change = tmp_path / "read.jsonl", tmp_path / "change.jsonl"
    assert await exec_one(settings, "spark-a", "nvidia-smi -L", transcript_path=read) == 0
    shown = capsys.readouterr().out
    assert "verdict: read_only" in shown and "ran inside the wall" in shown
    assert "NVIDIA GB10" in shown
    refused = await exec_one(settings, "spark-a", "docker rm -f vllm_node", transcript_path=change)
    assert refused == EXIT_NOT_RUN
    shown = capsys.readouterr().out
    assert "verdict: destructive" in shown and "not run" in shown and "ci mode" in shown
    assert cluster.host_state("spark-a")["docker"]["containers"]["vllm_node"]
    events = [json.loads(line) for line in change.read_text().splitlines()]
    [call] = [e for e in events if e["type"] == "tool_call"]
    [outcome] = [e for e in events if e["type"] == "tool_result"]
    assert call["input"] == {"host": "spark-a", "command": "docker rm -f vllm_node"}
    assert call["risk"] == "destructive" and outcome["is_error"] and outcome["meta"]["gated"]
    ran = [json.loads(line) for line in read.read_text().splitlines()]
    [result] = [e for e in ran if e["type"] == "tool_result"]
    assert result["meta"]["walled"] == {"spark-a": True} and result["meta"]["exit_status"] == 0


@pytest.mark.parametrize("cluster", ["no-landlock"], indirect=True)
async def test_doctor_says_per_host_whether_reads_run_inside_the_wall(
    cluster: SimCluster, tmp_path: Path
) -> None:
    inventory = cluster.write_inventory(tmp_path / "inv" / "inventory.yaml")
    checks = {check.name: check for check in await run_checks(Settings(), inventory)}
    head, worker = checks["spark-a: wall"], checks["spark-b: wall"]
    assert head.ok and head.detail.startswith("reads run inside the wall (landlock-abi-")
    assert head.detail.endswith("not stopped there: tcp address, device ioctls")  # not root
    assert worker.detail.startswith("reads are not walled: no Landlock in this kernel")


@pytest.mark.parametrize("cluster", ["no-landlock"], indirect=True)
async def test_scout_exec_on_a_host_without_a_wall_runs_only_exact_shapes_unasked(
    cluster: SimCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = settings_for(cluster, tmp_path, "ci")
    assert await exec_one(settings, "spark-b", "nvidia-smi -L") == 0
    shown = capsys.readouterr().out
    assert "ran without the wall" in shown and "NVIDIA GB10" in shown
    piped = await exec_one(settings, "spark-b", "nvidia-smi -L | head -n 1")
    shown = capsys.readouterr().out
    assert piped == EXIT_NOT_RUN and "spark-b cannot wall reads (no Landlock" in shown
    assert "not run" in shown and "ci mode" in shown


async def test_scout_exec_asks_before_a_change_in_ask_mode(
    cluster: SimCluster,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []
    monkeypatch.setattr("builtins.input", lambda prompt="": asked.append(prompt) or "n")
    settings = settings_for(cluster, tmp_path, "ask")
    status = await exec_one(settings, "spark-a", "docker stop vllm_node")
    shown = capsys.readouterr().out
    assert status == EXIT_NOT_RUN and asked, shown
    assert "approval needed" in shown and "not run" in shown
    assert cluster.host_state("spark-a")["docker"]["containers"]["vllm_node"]["state"] == "running"
