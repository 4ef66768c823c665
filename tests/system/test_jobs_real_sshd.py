"""Jobs on real OpenSSH: a job outlives the connection that started it; a status poll is one
awk that the login shell starts, with no `sh -c` before it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agent.safety.shell.judge import judge_shell
from tests.support.sshd_topology import Topology
from tools.base import ToolContext
from tools.job_start import JobStart, JobStartInput
from tools.job_status import JobStatus, JobStatusInput
from tools.jobs.host import start_job, stop_jobs
from tools.jobs.records import parse_status
from tools.jobs.status_script import status_command, status_env
from tools.ssh import Inventory, SSHPool

pytestmark = pytest.mark.system


async def test_a_job_survives_the_connection_that_started_it(
    sshd_topology: Topology, tmp_path: Path
) -> None:
    inventory = Inventory.from_dict(sshd_topology.inventory_data())
    name = f"survivor-{os.getpid()}"
    sleeper = f"sleep 2.{os.getpid()}"
    async with SSHPool(inventory) as pool:
        started = await JobStart(pool, judge_shell).run(
            JobStartInput(name=name, command=f"{sleeper}; echo finished-alone", hosts=["worker"]),
            ToolContext(spill_dir=tmp_path),
        )
    assert not started.is_error, started.text  # the pool and its connections are closed now
    assert any(line == sleeper for line in sshd_topology.namespace_commands(sshd_topology.worker))

    async with SSHPool(inventory) as fresh:
        status = JobStatusInput(hosts=["worker"], names=[name])
        context = ToolContext(spill_dir=tmp_path)
        first = await JobStatus(fresh).run(status, context)
        for _ in range(100):
            last = await JobStatus(fresh).run(status, context)
            if last.data["jobs"][0]["state"] != "running":
                break
            await asyncio.sleep(0.1)

    assert first.data["jobs"][0]["state"] == "running", first.text
    job = last.data["jobs"][0]
    assert job["state"] == "exited" and job["exit_code"] == 0, last.text
    assert job["pid"] == started.data["jobs"][0]["pid"]
    assert last.text.endswith("  finished-alone")
    job_dir = sshd_topology.worker.workdir / "jobs" / name
    assert (job_dir / "exit").read_text() == "0\n"


async def test_a_status_poll_is_awk_alone_under_the_login_shell(
    sshd_topology: Topology, tmp_path: Path
) -> None:
    inventory = Inventory.from_dict(sshd_topology.inventory_data())
    name, token = f"polled-{os.getpid()}", "@@scout-test-0002"
    async with SSHPool(inventory) as pool:
        await start_job(pool, "worker", name, "echo polled; sleep 30")
        try:
            for _ in range(100):
                alone = await pool.run(
                    "worker", status_command([name]), env=status_env(token, None), shell=False
                )
                records = parse_status("worker", alone.stdout, token)[1]
                if alone.exit_status != 0 or records[0].tail:
                    break
                await asyncio.sleep(0.05)
        finally:
            await stop_jobs(pool, "worker", [name], grace_s=1)

    assert alone.exit_status == 0 and alone.stderr == "", alone.stderr
    assert [(r.state, r.command, r.tail) for r in records] == [
        ("running", "echo polled; sleep 30", "polled")
    ]
