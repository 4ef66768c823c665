"""Jobs on real OpenSSH: a job outlives the connection that started it; a status poll is one
awk that the login shell starts, with no `sh -c` before it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent.safety.shell.judge import judge_shell
from tests.support.sshd_topology import Topology
from tests.support.waiting import until
from tools.base import ToolContext, ToolResult
from tools.job_start import JobStart, JobStartInput
from tools.job_status import JobStatus, JobStatusInput
from tools.jobs.host import start_job, stop_jobs
from tools.jobs.records import JobRecord, parse_status
from tools.jobs.status_script import status_command, status_env
from tools.ssh import CommandResult, Inventory, SSHPool

pytestmark = pytest.mark.system


async def test_a_job_survives_the_connection_that_started_it(
    sshd_topology: Topology, tmp_path: Path
) -> None:
    inventory = Inventory.from_dict(sshd_topology.inventory_data())
    name = f"survivor-{os.getpid()}"
    sleeper = f"sleep 600.{os.getpid()}"  # ended by the test once it was seen running
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
        subprocess.run(["pkill", "-x", "-f", sleeper], check=True)  # the job goes on to echo

        async def finished() -> ToolResult | None:
            polled = await JobStatus(fresh).run(status, context)
            return None if polled.data["jobs"][0]["state"] == "running" else polled

        last = await until(finished, f"job {name} to finish")

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

            async def logged() -> tuple[CommandResult, list[JobRecord]] | None:
                polled = await pool.run(
                    "worker", status_command([name]), env=status_env(token, None), shell=False
                )
                found = parse_status("worker", polled.stdout, token)[1]
                return (polled, found) if polled.exit_status != 0 or found[0].tail else None

            alone, records = await until(logged, f"job {name} to log its line")
        finally:
            await stop_jobs(pool, "worker", [name], grace_s=1)

    assert alone.exit_status == 0 and alone.stderr == "", alone.stderr
    assert [(r.state, r.command, r.tail) for r in records] == [
        ("running", "echo polled; sleep 30", "polled")
    ]
