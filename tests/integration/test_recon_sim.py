"""`scout recon` and the `recon`/`world_note` tools against the simulated seed pair (real SSH)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

from agent.world.model import WorldModel
from agent.world.render import render_compact
from sim.cluster import SimCluster
from tools.base import ToolContext, ToolResult
from tools.deploy.rollout.state import SessionState
from tools.plan_deployment import PlanDeploymentInput, PlanDeploymentTool
from tools.recon_tool import ReconInput, ReconTool
from tools.ssh import Inventory, SSHPool
from tools.world_note import WorldNoteInput, WorldNoteTool

REPO = Path(__file__).parents[2]
GIB = 1024**3


@pytest.fixture
def inventory(cluster: SimCluster, tmp_path: Path) -> Path:
    return cluster.write_inventory(tmp_path / "inv" / "inventory.yaml")


async def scout_recon(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run the real CLI in a subprocess while this loop keeps serving the simulated hosts."""
    with tempfile.TemporaryDirectory(prefix="scout-home-") as home:  # the log file, not in ~
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "agent.faces.cli",
            "recon",
            *args,
            cwd=REPO,
            env={**os.environ, "COLUMNS": "200", "SCOUT_HOME": home, **(env or {})},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await proc.communicate()
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.slow
async def test_recon_tables_show_the_seed_pair_and_its_blockers(inventory: Path) -> None:
    code, out, err = await scout_recon("--inventory", str(inventory), "--model-size-gb", "119")
    assert code == 0, err
    for host in ("spark-a", "spark-b"):
        row = next(line for line in out.splitlines() if f"│ {host} " in line and "GB10" in line)
        assert "aarch64" in row and "580.95.05" in row and "13.0" in row
    assert "vllm_node" in out and "Up 7 weeks" in out
    assert "RoCE link down on spark-b" in out
    assert "a ~119 GB model cannot start while vllm_node holds ~" in out


@pytest.mark.slow
async def test_recon_json_validates_against_the_world_model(inventory: Path) -> None:
    code, out, err = await scout_recon("--inventory", str(inventory), "--json")
    assert code == 0, err
    world = WorldModel.model_validate_json(out)
    head, worker = world.hosts["spark-a"], world.hosts["spark-b"]
    for facts in (head, worker):
        assert [g.name for g in facts.gpu.gpus] == ["NVIDIA GB10"]
        assert (facts.gpu.driver_version, facts.gpu.cuda_version) == ("580.95.05", "13.0")
        assert facts.identity.arch == "aarch64"
        assert facts.memory.unified_memory
        assert 119 * GIB <= facts.memory.total_bytes < 122 * GIB
        assert facts.memory.sources[0].command == "cat /proc/meminfo"
    (vllm,) = [c for c in head.docker.containers if c.name == "vllm_node"]
    assert vllm.state == "running" and 95e9 <= vllm.memory_bytes <= 99e9
    assert not any(port.up for port in worker.rdma.ports)
    assert any(port.up for port in head.rdma.ports)
    assert worker.toolkit.nvcc_on_path is False


@pytest.mark.slow
async def test_a_host_down_exits_1_and_the_other_still_prints(
    cluster: SimCluster, inventory: Path
) -> None:
    cluster.inject("spark-b", down=True)
    code, out, err = await scout_recon("--inventory", str(inventory))
    assert code == 1
    assert "spark-7d19" in out and "vllm_node" in out
    assert "spark-b unreachable" in err and "spark-b" in err


@pytest.mark.slow
async def test_recon_json_with_a_host_down_is_still_json_and_names_it(
    cluster: SimCluster, inventory: Path
) -> None:
    cluster.inject("spark-b", down=True)
    code, out, err = await scout_recon("--inventory", str(inventory), "--json")
    assert code == 1
    world = json.loads(out)  # nothing but the JSON on stdout: logs go to the log file
    assert "spark-b" in world["unreachable"] and "spark-a" in world["hosts"]
    assert "connect_retry" not in out + err and "spark-b unreachable" in err


@pytest.mark.slow
async def test_recon_uses_the_inventory_named_in_the_settings(
    inventory: Path, tmp_path: Path
) -> None:
    settings = tmp_path / "settings.yaml"
    settings.write_text(f"inventory: {inventory}\n")
    code, out, err = await scout_recon("--hosts", "spark-a", env={"SCOUT_SETTINGS": str(settings)})
    assert code == 0, err
    assert "spark-a" in out and "GB10" in out


@pytest.mark.slow
async def test_unknown_host_and_missing_inventory_are_clear_errors(
    inventory: Path, tmp_path: Path
) -> None:
    code, _, err = await scout_recon("--inventory", str(inventory), "--hosts", "spark-z")
    assert code == 2 and "unknown host 'spark-z'" in err and "spark-a, spark-b" in err
    code, _, err = await scout_recon("--inventory", str(tmp_path / "nope.yaml"))
    assert code == 2 and "cannot read inventory" in err and "Traceback" not in err


@pytest.mark.slow
async def test_unknown_host_key_is_reported_per_host(inventory: Path) -> None:
    (inventory.parent / "known_hosts").write_text("")
    code, _, err = await scout_recon("--inventory", str(inventory), "--hosts", "spark-a")
    assert code == 1
    assert "unknown host key" in err and "--trust-new-hosts" in err


@pytest.mark.slow
async def test_recon_tool_fills_the_world_and_stays_compact(
    inventory: Path, tmp_path: Path
) -> None:
    updates: list[str] = []
    world = WorldModel(on_change=lambda host, summary, new: updates.append(summary))
    async with SSHPool(Inventory.load(inventory)) as pool:
        ctx = ToolContext(spill_dir=tmp_path / "spill", world=world)
        tool = ReconTool(pool)
        result = await tool.run(ReconInput(model_size_gb=119), ctx)
    assert not result.is_error
    assert len(result.text.encode()) <= 3 * 1024
    assert result.text.count("NVIDIA GB10") == 2
    assert "[blocker] a ~119 GB model cannot start while vllm_node holds" in result.text
    assert set(result.data["hosts"]) == {"spark-a", "spark-b"} and not result.data["unreachable"]
    assert set(world.hosts) == {"spark-a", "spark-b"} and updates == ["probed spark-a, spark-b"]
    assert "exceeds" not in result.text  # findings are computed over the whole round at once
    note = await WorldNoteTool().run(
        WorldNoteInput(belief="spark-b p1 cable is seated", evidence="operator said so"), ctx
    )
    assert "noted (1 notes)" in note.text and world.notes[0].belief == "spark-b p1 cable is seated"


@pytest.mark.slow
async def test_recon_tool_reports_an_unreachable_worker_and_returns_the_head(
    cluster: SimCluster, inventory: Path, tmp_path: Path
) -> None:
    cluster.inject("spark-b", down=True)
    world = WorldModel()
    async with SSHPool(Inventory.load(inventory), connect_attempts=1) as pool:
        ctx = ToolContext(spill_dir=tmp_path / "spill", world=world)
        result = await ReconTool(pool).run(ReconInput(), ctx)
    assert not result.is_error
    assert "spark-b: UNREACHABLE — cannot reach spark-b" in result.text
    assert "spark-a (spark-7d19) aarch64" in result.text
    assert list(result.data["hosts"]) == ["spark-a"] and "spark-b" in result.data["unreachable"]


QWEN = "Qwen/Qwen3.5-122B-A10B-FP8"


async def recon_and_plan(scenario: str, tmp_path: Path) -> tuple[WorldModel, ToolResult]:
    """Recon the scenario over real SSH, then plan_deployment of the Qwen model on the pair."""
    async with SimCluster(scenario, tmp_path / "sim") as running:
        inventory = running.write_inventory(tmp_path / "inv" / "inventory.yaml")
        world = WorldModel()
        async with SSHPool(Inventory.load(inventory)) as pool:
            ctx = ToolContext(spill_dir=tmp_path / "spill", world=world)
            await ReconTool(pool).run(ReconInput(), ctx)
            plan = await PlanDeploymentTool(SessionState(), pool).run(
                PlanDeploymentInput(model=QWEN, hosts=["spark-a", "spark-b"]), ctx
            )
    return world, plan


@pytest.mark.slow
async def test_seed_pair_facts_list_the_cached_model_and_the_plan_trusts_them(
    tmp_path: Path,
) -> None:
    world, plan = await recon_and_plan("seed-pair", tmp_path)
    for name in ("spark-a", "spark-b"):
        cache = world.hosts[name].hf_cache
        assert cache.models == {QWEN: 119_000_000_000}
        assert cache.sources[0].host == name and cache.sources[0].exit_status == 0
    assert "not cached" not in plan.text and "hf download" not in plan.text
    assert (
        f"[ok] weights: {QWEN} cached on spark-b (119.0 GB at 84c8c7f, the head spark-a's "
        "revision, none unfinished)"
    ) in plan.text
    assert f"HF cache: {QWEN} 119 GB" in render_compact(world)


@pytest.mark.slow
async def test_model_missing_on_the_worker_is_a_warning_the_plan_copies_it_there(
    tmp_path: Path,
) -> None:
    world, plan = await recon_and_plan("seed-pair-no-model", tmp_path)
    assert world.hosts["spark-b"].hf_cache.models == {}
    assert (
        f"[warning] weights: {QWEN} is not cached on spark-b; the engine runs with "
        "HF_HUB_OFFLINE=1 → the plan copies it from spark-a to spark-b with rsync, as a job"
        in plan.text
    )
    assert "not cached on spark-a" not in plan.text


@pytest.mark.slow
async def test_unplugged_worker_link_needs_a_person_without_trying_it_first(
    tmp_path: Path,
) -> None:
    world, plan = await recon_and_plan("roce-unfixable", tmp_path)
    nics = {n.name: n for n in world.hosts["spark-b"].network.interfaces}
    assert nics["enp1s0f1np1"].carrier is False
    assert world.hosts["spark-a"].network.interfaces[0].carrier is True
    assert plan.is_error
    assert plan.text.startswith(
        "The plan cannot succeed until these are done (not fixable from here):\n"
        "- spark-b's RoCE link (enp1s0f1np1) is up but has no carrier (NO-CARRIER on "
    )
    assert "reseat the QSFP cable" in plan.text and "needs a person" in plan.text
    assert "sudo ip link set enp1s0f1np1 up" not in plan.text
