"""A plan step run as a job on the sim: it ends with the job log's own error line, or its news."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sim.cluster import SimCluster
from sim.scenario import load_scenario
from tests.support.job_kit import empty_pair
from tools.deploy.launch.parts import FAILED_LINE, READY_LINE
from tools.deploy.rollout.step_jobs import run_step_job
from tools.deploy.steps import DeployStep, StepCheck
from tools.ssh import Inventory, SSHPool


@pytest.fixture
async def pool(tmp_path: Path) -> AsyncIterator[SSHPool]:
    async with SimCluster(empty_pair(time_scale=120), tmp_path / "sim") as cluster:
        inventory = Inventory.load(cluster.write_inventory(tmp_path / "inv" / "inventory.yaml"))
        async with SSHPool(inventory) as running:
            yield running


def step(command: str, job: str, **options) -> DeployStep:
    check = StepCheck(host="spark-a", command="true", description="nothing")
    return DeployStep(
        kind="pull", id=f"x:{job}", title=job, host="spark-a", actions=[command], check=check,
        rollback="-", job=job, **options,
    )  # fmt: skip


async def test_a_failed_engine_start_ends_with_its_log_line(pool: SSHPool) -> None:
    serve = step(
        "docker exec scout-vllm vllm serve Qwen/Qwen3.5-122B-A10B-FP8",
        "scout-serve",
        ready=f"{READY_LINE}|{FAILED_LINE}",
    )
    code, said = await run_step_job(pool, serve, wait_s=60, report=lambda _: None)
    assert code not in (0, None)
    assert said.startswith("job scout-serve failed on spark-a: ")
    assert "No such container: scout-vllm" in said  # docker's own line, from the job log


async def test_a_job_that_runs_on_is_started_and_left_running(pool: SSHPool) -> None:
    rank = step("sleep 30", "scout-rank-1", wait=False)
    code, said = await run_step_job(pool, rank, wait_s=60, report=lambda _: None)
    assert code == 0 and "scout-rank-1 started on spark-a" in said and "runs on" in said
    again, why = await run_step_job(pool, rank, wait_s=60, report=lambda _: None)
    assert again == 1 and "already exists on spark-a" in why


async def test_a_gated_download_without_a_token_ends_with_the_clients_error(
    tmp_path: Path,
) -> None:
    """The operator's environment has no HF_TOKEN: nothing is passed, the job's own line says why.
    (With a token the variable goes into the job's environment only; the simulator's `setsid`
    launch does not pass a job's environment on yet, so that path is not tested here.)"""
    download = step(
        "hf download Qwen/Qwen3.5-122B-A10B-FP8", "download-weights", operator_env=["HF_TOKEN"]
    )
    async with SimCluster(load_scenario("gated-model"), tmp_path / "sim") as cluster:
        inventory = Inventory.load(cluster.write_inventory(tmp_path / "inv" / "inventory.yaml"))
        async with SSHPool(inventory) as pool:
            code, why = await run_step_job(
                pool, download, wait_s=120, report=lambda _: None, environ={}
            )
    assert code not in (0, None)
    assert why.startswith("job download-weights failed on spark-a: ")
    assert "GatedRepoError: 401 Client Error" in why
