"""`scout recon` on eight simulated hosts (the seed's head and seven copies of its worker)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sim.cluster import SimCluster
from sim.fleet import fleet
from sim.scenario import load_scenario

pytestmark = pytest.mark.slow

REPO = Path(__file__).parents[2]
WORKERS = [f"spark-{letter}" for letter in "bcdefgh"]


@pytest.fixture
async def inventory(tmp_path: Path) -> AsyncIterator[Path]:
    async with SimCluster(fleet(load_scenario("seed-pair"), 8), tmp_path / "sim") as cluster:
        yield cluster.write_inventory(tmp_path / "inv" / "inventory.yaml")


async def scout_recon(*args: str) -> tuple[int, str, str]:
    """The real CLI in a subprocess while this loop keeps serving the simulated hosts."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agent.faces.cli",
        "recon",
        *args,
        cwd=REPO,
        env={**os.environ, "COLUMNS": "220"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    return proc.returncode or 0, out.decode(), err.decode()


async def test_tables_show_the_seven_workers_once(inventory: Path) -> None:
    code, out, err = await scout_recon("--inventory", str(inventory))
    assert code == 0, err
    assert "spark-b … spark-h (7 hosts)" in out and "│ spark-a " in out
    assert "│ spark-d " not in out
    assert "RoCE link down on 7 hosts (spark-b … spark-h)" in out


async def test_json_keeps_every_host_and_adds_the_grouping(inventory: Path) -> None:
    code, out, err = await scout_recon("--inventory", str(inventory), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert sorted(data["hosts"]) == sorted(["spark-a", *WORKERS])
    assert data["hosts"]["spark-e"]["identity"]["hostname"] == "spark-b4ef"
    groups = data["grouping"]["host_groups"]
    assert {"hosts": WORKERS, "differ_in": ["hostname"]} in groups
    assert {"hosts": ["spark-a"], "differ_in": []} in groups
    roce = [f for f in data["grouping"]["findings"] if f["kind"] == "roce_link_down"]
    assert [f["hosts"] for f in roce] == [WORKERS]
    assert len([f for f in data["findings"] if f["kind"] == "roce_link_down"]) == 7
