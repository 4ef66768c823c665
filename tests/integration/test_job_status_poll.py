"""How a job status poll reaches a host: one awk that the login shell starts under `timeout`,
with no `sh -c` before it (what bench/jobs.py measures), and the sh script with the program
inline where the job root holds no copy of the program."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sim.cluster import SimCluster
from tests.support.waiting import until
from tools.jobs.host import job_status, start_job, stop_jobs
from tools.jobs.records import JobRecord, parse_status
from tools.jobs.status_script import PROGRAM_FILE, status_command, status_env, status_script
from tools.ssh import SSHPool

TOKEN = "@@scout-test-0001"
COMMAND = "echo resting; sleep 60"


@pytest.fixture
async def napper(pool: SSHPool) -> AsyncIterator[str]:
    await start_job(pool, "spark-a", "napper", COMMAND)

    async def logged() -> str:
        return (await job_status(pool, "spark-a", ["napper"]))[1][0].tail

    await until(logged, "the job to log its line")
    yield "napper"
    await stop_jobs(pool, "spark-a", ["napper"], grace_s=1)


def seen(records: list[JobRecord]) -> list[tuple[str, str, str, str, int | None]]:
    return [(r.name, r.state, r.command, r.tail, r.pid) for r in records]


async def test_a_poll_is_awk_alone_and_reads_what_the_script_reads(
    pool: SSHPool, napper: str
) -> None:
    alone = await pool.run(
        "spark-a", status_command([napper]), env=status_env(TOKEN, None), shell=False
    )
    script = await pool.run("spark-a", status_script([napper], TOKEN, inline=True))

    assert alone.exit_status == 0 and alone.stderr == ""
    records = parse_status("spark-a", alone.stdout, TOKEN)[1]
    assert seen(records)[0][:4] == ("napper", "running", COMMAND, "resting")
    assert seen(records) == seen(parse_status("spark-a", script.stdout, TOKEN)[1])


async def test_a_job_root_without_the_program_is_read_with_the_program_inline(
    cluster: SimCluster, pool: SSHPool, napper: str
) -> None:
    (cluster.host_dir("spark-a") / "home" / ".scout" / "jobs" / PROGRAM_FILE).unlink()

    alone = await pool.run(
        "spark-a", status_command([napper]), env=status_env(TOKEN, None), shell=False
    )
    _now, records = await job_status(pool, "spark-a", [napper])

    assert alone.exit_status != 0 and TOKEN not in alone.stdout
    assert seen(records)[0][:4] == ("napper", "running", COMMAND, "resting")
