"""A job that runs a command inside a container (`docker exec`): the simulated engine keeps the
exec'd process when its client dies, as Docker does, and job_stop ends it there too."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sim.cluster import SimCluster
from tests.support.job_kit import JobDesk, empty_pair, job_facts
from tests.support.waiting import until
from tools.ssh import Inventory, SSHPool

NAP = "docker exec vllm_node sleep 300"


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[SimCluster]:
    async with SimCluster(empty_pair(), tmp_path / "sim") as running:
        yield running


@pytest.fixture
async def desk(cluster: SimCluster, tmp_path: Path) -> AsyncIterator[JobDesk]:
    inventory = Inventory.load(cluster.write_inventory(tmp_path / "inv" / "inventory.yaml"))
    async with SSHPool(inventory) as pool:
        yield JobDesk(pool, tmp_path / "spill")


def exec_pids(cluster: SimCluster) -> set[int]:
    pids = cluster.host_state("spark-a")["docker"]["containers"]["vllm_node"].get("pids", [])
    return {pid for pid in pids if Path(f"/proc/{pid}").exists()}


async def started_inside(cluster: SimCluster, desk: JobDesk, before: set[int]) -> tuple[int, int]:
    """(the job's runner pid, the pid of its process inside the container)."""
    start = await desk.call("job_start", name="nap", command=NAP, hosts=["spark-a"])
    assert not start.is_error, start.text
    appeared = await until(
        lambda: exec_pids(cluster) - before, "the exec'd process to appear in the container"
    )
    return start.data["jobs"][0]["pid"], appeared.pop()


async def test_killing_a_docker_exec_client_leaves_its_process_in_the_container(
    cluster: SimCluster, desk: JobDesk
) -> None:
    before = exec_pids(cluster)
    runner, inside = await started_inside(cluster, desk, before)

    os.killpg(runner, signal.SIGKILL)  # the whole job on the host, client included
    await asyncio.sleep(0.5)

    assert Path(f"/proc/{inside}").exists()  # as docker/cli#5309 shows on Docker 26.1
    stopped = await desk.call("job_stop", hosts=["spark-a"], names=["nap"], grace=2)

    assert stopped.text == (
        "spark-a/nap: was not running; its process inside container vllm_node ended on TERM"
    )
    assert exec_pids(cluster) == before


async def test_job_stop_ends_the_client_and_the_process_inside_the_container(
    cluster: SimCluster, desk: JobDesk
) -> None:
    before = exec_pids(cluster)
    await started_inside(cluster, desk, before)

    stopped = await desk.call("job_stop", hosts=["spark-a"], names=["nap"], grace=2)

    assert stopped.text == (
        "spark-a/nap: stopped (its process group ended on TERM); its process inside container "
        "vllm_node ended on TERM"
    )
    assert exec_pids(cluster) == before  # the engine's own processes, nothing of the job
    status = await desk.call("job_status", hosts=["spark-a"], names=["nap"])
    job = job_facts(status)[("spark-a", "nap")]
    assert job["state"] == "stopped" and job["command"] == NAP  # the command as it was given
