"""Durable jobs on the simulated pair over real SSH, through the executor as the agent runs them:
downloads and pulls in one batch, progress, waiting, failures, stopping, dropped connections."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sim.cluster import SimCluster
from sim.fakehost.procs import host_processes
from sim.fakehost.state import locked_state
from tests.support.job_kit import IMAGE, MODEL, JobDesk, empty_pair, job_facts
from tests.support.waiting import until
from tools.ssh import Inventory, SSHPool

HOSTS = ["spark-a", "spark-b"]


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[SimCluster]:
    async with SimCluster(empty_pair(time_scale=120), tmp_path / "sim") as running:
        yield running


@pytest.fixture
async def desk(cluster: SimCluster, tmp_path: Path) -> AsyncIterator[JobDesk]:
    inventory = Inventory.load(cluster.write_inventory(tmp_path / "inv" / "inventory.yaml"))
    async with SSHPool(inventory) as pool:
        yield JobDesk(pool, tmp_path / "spill")


@pytest.mark.slow
async def test_download_and_pull_on_both_hosts_in_one_batch(
    cluster: SimCluster, desk: JobDesk
) -> None:
    started = await desk.batch(
        ("job_start", {"name": "weights", "command": f"hf download {MODEL}", "hosts": HOSTS}),
        ("job_start", {"name": "image", "command": f"docker pull {IMAGE}", "hosts": HOSTS}),
    )
    assert [r.is_error for r in started] == [False, False], [r.text for r in started]
    assert started[0].text.startswith("spark-a: started weights (pid ")
    assert ("job_start", "mutating") in desk.gate.seen

    fractions, midway = [], []
    for _ in range(40):
        status = await desk.call("job_status", hosts=HOSTS, names=["weights", "image"])
        weights = job_facts(status)[("spark-b", "weights")]
        fraction = weights["progress"]["fraction"]
        fractions.append(fraction)
        if fraction is not None and fraction < 1:
            midway.append(status.text)
        seen = [f for f in fractions if f is not None]
        if weights["state"] != "running" or len(set(seen)) >= 3:
            break
        await asyncio.sleep(0.2)
    assert len(set(seen)) >= 3 and seen == sorted(seen), fractions  # progress rises
    assert any("/14 files, " in text and "ETA" in text for text in midway), midway

    waited = await desk.call("job_wait", hosts=HOSTS, names=["weights", "image"], timeout=120)

    assert not waited.is_error, waited.text
    assert waited.text.startswith("all jobs are done")
    for (host, name), job in job_facts(waited).items():
        assert job["state"] == "exited" and job["exit_code"] == 0, (host, name)
        assert job["progress"]["ready"] and job["progress"]["fraction"] == 1.0
    assert "== spark-b/image: exited 0 after" in waited.text
    assert f"pulled {IMAGE}" in waited.text
    assert any(line.startswith("spark-a/weights: running ") for line in desk.progress)
    assert any(line.startswith("spark-a/weights: exited") for line in desk.progress)
    for host in HOSTS:
        state = cluster.host_state(host)
        assert state["hf_cache"][MODEL] == {"size_gb": 119.0}
        assert any(f"{i['repository']}:{i['tag']}" == IMAGE for i in state["docker"]["images"])


async def test_a_failed_job_shows_its_exit_code_and_log_tail(desk: JobDesk) -> None:
    await desk.call("job_start", name="typo", command="hf download Qwen/Qwen9-Nope", hosts=HOSTS)

    waited = await desk.call("job_wait", hosts=HOSTS, names=["typo"], timeout=60)

    assert waited.is_error
    assert "== spark-a/typo: exited 1 after" in waited.text
    assert "RepositoryNotFoundError: 404 Client Error." in waited.text
    assert "Repository Not Found for url: https://huggingface.co/api/models/Qwen/Qwen9-Nope" in (
        waited.text
    )
    job = job_facts(waited)[("spark-b", "typo")]
    assert job["exit_code"] == 1 and job["progress"]["error"].startswith(
        "huggingface_hub.errors.RepositoryNotFoundError"
    )


async def test_stop_ends_the_whole_process_group(cluster: SimCluster, desk: JobDesk) -> None:
    # a job with children of its own: a pull in the background and a download in front
    command = f"docker pull {IMAGE} & hf download {MODEL}; wait"
    set_time_scale(cluster, "spark-b", 5.0)  # slow enough to still run when it is stopped
    host_dir = cluster.host_dir("spark-b")
    before = set(host_processes(host_dir))  # what the host runs anyway (nothing, or a server)
    start = await desk.call("job_start", name="fetch", command=command, hosts=["spark-b"])
    assert not start.is_error, start.text
    await until(lambda: MODEL in cluster.host_state("spark-b")["hf_cache"])
    assert len(set(host_processes(host_dir)) - before) >= 3  # runner, docker pull, hf download

    stopped = await desk.call("job_stop", hosts=["spark-b"], names=["fetch"], grace=5)

    assert stopped.text == "spark-b/fetch: stopped (its process group ended on TERM)"
    assert ("job_stop", "destructive") in desk.gate.seen
    assert set(host_processes(host_dir)) <= before
    status = await desk.call("job_status", hosts=["spark-b"], names=["fetch"])
    assert job_facts(status)[("spark-b", "fetch")]["state"] == "stopped"
    assert "stopped by Scout after" in status.text
    assert cluster.host_state("spark-b")["hf_cache"][MODEL]["partial"] is True


@pytest.mark.slow
async def test_wait_rides_out_a_dropped_connection_and_the_job_never_restarts(
    cluster: SimCluster, desk: JobDesk
) -> None:
    set_time_scale(cluster, "spark-b", 200.0)
    start = await desk.call("job_start", name="weights", command=f"hf download {MODEL}",
                            hosts=["spark-b"])  # fmt: skip
    pid = start.data["jobs"][0]["pid"]
    waiting = asyncio.create_task(
        desk.call("job_wait", hosts=["spark-b"], names=["weights"], timeout=120)
    )
    await until(lambda: any("spark-b/weights: running" in line for line in desk.progress))

    cluster.inject("spark-a", down=True)  # the head: the worker is reached through it
    await until(lambda: any("retrying" in line for line in desk.progress))
    cluster.inject("spark-a", down=False)
    waited = await waiting

    assert not waited.is_error, waited.text
    assert "re-established" in waited.text
    assert any(line == "spark-b: reachable again" for line in desk.progress)
    job = job_facts(waited)[("spark-b", "weights")]
    assert job["state"] == "exited" and job["exit_code"] == 0 and job["pid"] == pid
    log = await desk.call("job_logs", host="spark-b", name="weights", lines=5000)
    assert log.text.count("Download complete: ") == 1  # one run of the command, never two
    assert log.text.count("/snapshots/") == 1
    assert cluster.host_state("spark-b")["hf_cache"][MODEL] == {"size_gb": 119.0}


async def test_status_of_unknown_jobs_and_hosts_says_which(desk: JobDesk) -> None:
    status = await desk.call("job_status", hosts=["spark-a"], names=["nothing"])
    listing = await desk.call("job_status", hosts=["spark-b"])

    assert status.is_error and "missing: spark-a has no job named nothing" in status.text
    assert listing.text == "== spark-b: no jobs ==" and not listing.is_error


def set_time_scale(cluster: SimCluster, host: str, scale: float) -> None:
    with locked_state(cluster.host_dir(host)) as state:
        state["rates"]["time_scale"] = scale


async def test_a_job_killed_outside_scout_is_lost_not_failed_silently(
    cluster: SimCluster, desk: JobDesk
) -> None:
    start = await desk.call("job_start", name="nap", command="sleep 300", hosts=["spark-a"])
    pid = start.data["jobs"][0]["pid"]
    os.killpg(pid, signal.SIGKILL)  # the host's OOM killer or an operator, not Scout

    await until(lambda: not Path(f"/proc/{pid}").exists())
    status = await desk.call("job_status", hosts=["spark-a"], names=["nap"])

    assert job_facts(status)[("spark-a", "nap")]["state"] == "lost" and status.is_error
    assert "== spark-a/nap: lost: its runner is gone without an exit status" in status.text


async def test_a_job_stuck_waiting_ends_the_wait_with_its_reason(desk: JobDesk) -> None:
    wait = (
        "INFO 04-01 02:46:00 ray_utils.py:214] Waiting for creating a placement group of specs "
        "for {} seconds. specs=[{{'GPU': 1.0}}, {{'GPU': 1.0}}]. Check `ray status`."
    )
    said = "; ".join(f'echo "{wait.format(n)}"' for n in (10, 30, 70))
    await desk.call("job_start", name="engine", command=f"{said}; sleep 300", hosts=["spark-a"])

    waited = await desk.call("job_wait", hosts=["spark-a"], names=["engine"], timeout=240)
    await desk.call("job_stop", hosts=["spark-a"], names=["engine"], grace=1)

    assert waited.is_error and waited.data["reason"] == "waiting"
    progress = job_facts(waited)[("spark-a", "engine")]["progress"]
    assert progress["waiting"].startswith("Waiting for creating a placement group of specs")
    assert "stuck waiting: Waiting for creating a placement group" in waited.text
