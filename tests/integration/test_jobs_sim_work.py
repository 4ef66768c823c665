"""The long work of a deployment as jobs on the simulated pair: copying the weights to the worker,
an engine loading with its log in the job log, and the fabric benchmarks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sim.cluster import SimCluster
from sim.scenario import load_scenario
from tests.support.job_kit import MODEL, SMALL_MODEL, JobDesk, empty_pair, job_facts
from tools.ssh import Inventory, SSHPool

CACHE = "~/.cache/huggingface/hub/models--Qwen--Qwen3.5-122B-A10B-FP8/"


async def open_desk(cluster: SimCluster, tmp_path: Path) -> AsyncIterator[JobDesk]:
    inventory = Inventory.load(cluster.write_inventory(tmp_path / "inv" / "inventory.yaml"))
    async with SSHPool(inventory) as pool:
        yield JobDesk(pool, tmp_path / "spill")


@pytest.fixture
async def empty(tmp_path: Path) -> AsyncIterator[tuple[SimCluster, JobDesk]]:
    async with SimCluster(empty_pair(time_scale=600), tmp_path / "sim") as cluster:
        async for desk in open_desk(cluster, tmp_path):
            yield cluster, desk


@pytest.fixture
async def healthy(tmp_path: Path) -> AsyncIterator[tuple[SimCluster, JobDesk]]:
    async with SimCluster(load_scenario("healthy-pair"), tmp_path / "sim") as cluster:
        async for desk in open_desk(cluster, tmp_path):
            yield cluster, desk


@pytest.mark.slow
async def test_weights_downloaded_on_the_head_are_copied_to_the_worker(
    empty: tuple[SimCluster, JobDesk],
) -> None:
    cluster, desk = empty
    await desk.call("job_start", name="weights", command=f"hf download {MODEL}", hosts=["spark-a"])
    await desk.call("job_wait", hosts=["spark-a"], names=["weights"], timeout=60)
    worker = cluster.scenario.hosts["spark-b"].address  # the management network: spark-b's
    copy = f"rsync -a --info=progress2 {CACHE} {worker}:{CACHE}"  # fabric link is down here
    await desk.call("job_start", name="copy", command=copy, hosts=["spark-a"])

    waited = await desk.call("job_wait", hosts=["spark-a"], names=["copy"], timeout=60)

    job = job_facts(waited)[("spark-a", "copy")]
    assert job["exit_code"] == 0 and job["progress"]["kind"] == "rsync", waited.text
    assert job["progress"]["bytes_done"] == 119_000_000_000
    assert "119G (100%) at 1.00GB/s, files 14/14 checked" in waited.text
    assert cluster.host_state("spark-b")["hf_cache"][MODEL] == {"size_gb": 119.0}


@pytest.mark.slow
async def test_a_copy_over_a_link_that_is_down_fails_with_sshs_line(
    empty: tuple[SimCluster, JobDesk],
) -> None:
    cluster, desk = empty
    await desk.call("job_start", name="weights", command=f"hf download {MODEL}", hosts=["spark-a"])
    await desk.call("job_wait", hosts=["spark-a"], names=["weights"], timeout=60)
    copy = f"rsync -a --info=progress2 {CACHE} 192.168.100.11:{CACHE}"  # spark-b's CX7, down
    await desk.call("job_start", name="copy", command=copy, hosts=["spark-a"])

    waited = await desk.call("job_wait", hosts=["spark-a"], names=["copy"], timeout=60)

    job = job_facts(waited)[("spark-a", "copy")]
    assert job["exit_code"] == 255 and waited.is_error
    assert job["progress"]["error"] == (
        "ssh: connect to host 192.168.100.11 port 22: No route to host"
    )
    assert MODEL not in cluster.host_state("spark-b")["hf_cache"]


@pytest.mark.slow
async def test_a_copy_to_a_worker_that_is_down_fails_as_rsync_over_ssh_does(
    empty: tuple[SimCluster, JobDesk],
) -> None:
    cluster, desk = empty
    await desk.call("job_start", name="weights", command=f"hf download {MODEL}", hosts=["spark-a"])
    await desk.call("job_wait", hosts=["spark-a"], names=["weights"], timeout=60)
    cluster.inject("spark-b", down=True)  # powered off: the head's ssh and rsync get no answer
    worker = cluster.scenario.hosts["spark-b"].address
    copy = f"rsync -a --info=progress2 {CACHE} {worker}:{CACHE}"
    await desk.call("job_start", name="copy", command=copy, hosts=["spark-a"])
    await desk.call("job_start", name="probe", command=f"ssh {worker} hostname", hosts=["spark-a"])

    waited = await desk.call("job_wait", hosts=["spark-a"], names=["copy", "probe"], timeout=60)
    logs = await desk.call("job_logs", host="spark-a", name="copy")

    jobs = job_facts(waited)
    refused = f"ssh: connect to host {worker} port 22: No route to host"
    assert jobs[("spark-a", "copy")]["exit_code"] == 255 and waited.is_error
    assert jobs[("spark-a", "copy")]["progress"]["error"] == refused
    assert "rsync: connection unexpectedly closed (0 bytes received so far) [sender]" in logs.text
    assert "rsync error: unexplained error (code 255) at io.c(231) [sender=3.2.7]" in logs.text
    assert jobs[("spark-a", "probe")]["exit_code"] == 255
    assert MODEL not in cluster.host_state("spark-b")["hf_cache"]


@pytest.mark.slow
async def test_an_engine_started_as_a_job_logs_its_loading_into_the_job_log(
    empty: tuple[SimCluster, JobDesk],
) -> None:
    cluster, desk = empty
    await desk.batch(
        (
            "job_start",
            {"name": "weights", "command": f"hf download {SMALL_MODEL}", "hosts": ["spark-a"]},
        ),
        (
            "job_start",
            {
                "name": "ctr",
                "hosts": ["spark-a"],
                "command": (
                    "docker rm -f vllm_node >/dev/null 2>&1; docker run -d --name solo "
                    "--gpus all -v ~/.cache/huggingface:/root/.cache/huggingface "
                    "nvcr.io/nvidia/vllm:26.05-py3 sleep infinity"
                ),
            },
        ),
    )
    await desk.call("job_wait", hosts=["spark-a"], names=["weights", "ctr"], timeout=60)
    serve = f"docker exec solo vllm serve {SMALL_MODEL} --port 8001"

    await desk.call("job_start", name="engine", command=serve, hosts=["spark-a"])
    waited = await desk.call(
        "job_wait",
        hosts=["spark-a"],
        names=["engine"],
        pattern="Application startup complete",
        timeout=60,
    )

    assert waited.text.startswith("the pattern 'Application startup complete' appeared")
    job = job_facts(waited)[("spark-a", "engine")]
    assert job["state"] == "running" and job["progress"]["ready"]
    assert job["progress"]["kind"] == "engine" and job["progress"]["version"] == "0.19.1"
    assert job["match"].endswith("INFO:     Application startup complete.")
    log = await desk.call("job_logs", host="spark-a", name="engine", lines=200)
    assert "Loading safetensors checkpoint shards: 100% Completed | 5/5" in log.text
    assert "Model loading took 14.9 GiB memory and 16.0 seconds" in log.text
    stopped = await desk.call("job_stop", hosts=["spark-a"], names=["engine"])
    assert stopped.text.startswith("spark-a/engine: stopped")
    assert cluster.host_state("spark-a")["docker"]["containers"]["solo"]["state"] == "running"


async def test_fabric_benchmarks_as_jobs_report_their_bandwidth(
    healthy: tuple[SimCluster, JobDesk],
) -> None:
    _cluster, desk = healthy
    server = "ib_write_bw -d rocep1s0f1 -p 12000 --report_gbits -F"
    await desk.call("job_start", name="ib-server", command=server, hosts=["spark-b"])
    await desk.batch(
        (
            "job_start",
            {"name": "ib-client", "command": f"{server} 192.168.100.11", "hosts": ["spark-a"]},
        ),
        (
            "job_start",
            {
                "name": "nccl",
                "hosts": ["spark-a"],
                "command": (
                    "mpirun -np 2 -H 192.168.100.10,192.168.100.11 -x NCCL_IB_HCA=rocep1s0f1 "
                    "$HOME/nccl-tests/build/all_gather_perf -b 1G -e 4G -f 2"
                ),
            },
        ),
    )

    waited = await desk.call("job_wait", hosts=["spark-a"], names=["ib-client", "nccl"], timeout=60)

    jobs = job_facts(waited)
    assert jobs[("spark-a", "ib-client")]["progress"]["bw_average"] == 92.57
    assert jobs[("spark-a", "nccl")]["progress"]["avg_busbw_gb_s"] == 21.4
    assert "avg bus bandwidth 21.4 GB/s (171 Gb/s)" in waited.text
    server_done = await desk.call("job_wait", hosts=["spark-b"], names=["ib-server"], timeout=30)
    assert job_facts(server_done)[("spark-b", "ib-server")]["exit_code"] == 0


async def test_all_gather_perf_needs_nccl_tests_built_on_every_node(tmp_path: Path) -> None:
    """perftest-only: nccl-tests was never built (NVIDIA's NCCL playbook not followed), so mpirun
    stops as Open MPI does; the pair has ib_write_bw instead, and `test -x` tells them apart."""
    program = "$HOME/nccl-tests/build/all_gather_perf"
    nccl = f"mpirun -np 2 -H 192.168.100.10,192.168.100.11 {program} -b 1G -e 1G"
    async with SimCluster(load_scenario("perftest-only"), tmp_path / "sim") as cluster:
        inventory = Inventory.load(cluster.write_inventory(tmp_path / "inv" / "inventory.yaml"))
        async with SSHPool(inventory) as pool:
            desk = JobDesk(pool, tmp_path / "spill")
            await desk.call("job_start", name="nccl", command=nccl, hosts=["spark-a"])
            waited = await desk.call("job_wait", hosts=["spark-a"], names=["nccl"], timeout=60)
            logs = await desk.call("job_logs", host="spark-a", name="nccl")
            have = await pool.run(
                "spark-a",
                f'test -x "{program}" || echo no-nccl-tests; command -v ib_write_bw',
                timeout=30,
            )
            head = cluster.host_state("spark-a")["hostname"]

    assert job_facts(waited)[("spark-a", "nccl")]["exit_code"] == 1
    assert (
        "mpirun was unable to launch the specified application as it could not access\n"
        "or execute an executable:\n"
    ) in logs.text
    assert f"nccl-tests/build/all_gather_perf\nNode: {head}\n" in logs.text
    assert "while attempting to start process rank 0." in logs.text
    lines = have.stdout.splitlines()
    assert lines[0] == "no-nccl-tests" and lines[1].endswith("/ib_write_bw"), have.stdout
