"""Scout killed mid-download (a real SIGKILL): the job runs on, and a fresh connection finds it.

Resuming a session wires this in later; here the host side is proven: the job folder on the
host is all a new Scout needs to find the job running or finished, with its progress.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sim.cluster import SimCluster
from tests.support.job_kit import MODEL, JobDesk, empty_pair, job_facts
from tests.support.waiting import WAIT_S
from tools.ssh import Inventory, SSHPool

pytestmark = pytest.mark.slow

REPO = Path(__file__).parents[2]


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[SimCluster]:
    async with SimCluster(empty_pair(time_scale=150), tmp_path / "sim") as running:
        yield running


async def test_a_job_outlives_a_killed_scout_and_a_fresh_one_finds_it(
    cluster: SimCluster, tmp_path: Path
) -> None:
    inventory = cluster.write_inventory(tmp_path / "inv" / "inventory.yaml")
    scout = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.support.job_starter", str(inventory), str(tmp_path / "a"),
        cwd=REPO, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert scout.stdout is not None
    said = await asyncio.wait_for(scout.stdout.readline(), WAIT_S)
    assert said == b"started\n"
    while MODEL not in cluster.host_state("spark-b")["hf_cache"]:  # the download is under way
        await asyncio.sleep(0.05)

    scout.send_signal(signal.SIGKILL)
    assert await scout.wait() == -signal.SIGKILL

    async with SSHPool(Inventory.load(inventory)) as pool:
        desk = JobDesk(pool, tmp_path / "b")
        found = await desk.call("job_status", hosts=["spark-b"])
        job = job_facts(found)[("spark-b", "weights")]
        assert job["state"] in ("running", "exited"), found.text
        assert job["progress"]["kind"] == "hf_download" and "/14 files" in found.text
        waited = await desk.call("job_wait", hosts=["spark-b"], names=["weights"], timeout=120)

    assert job_facts(waited)[("spark-b", "weights")]["exit_code"] == 0, waited.text
    assert cluster.host_state("spark-b")["hf_cache"][MODEL] == {"size_gb": 119.0}
