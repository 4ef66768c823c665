"""Job status polls on real OpenSSH through the reader resident in the wall
(tools/jobs/walled_read.py): after the first poll, a poll opens no SSH session (the host's
sshd logs none), and it reads what the awk read reads, from inside the wall."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from pathlib import Path

import pytest

from tests.support.sshd_topology import Topology
from tests.support.waiting import until
from tools.jobs import host
from tools.jobs.host import JobCommandError, job_status, start_job, stop_jobs
from tools.jobs.records import JobRecord, parse_status
from tools.jobs.status_script import status_command, status_env
from tools.ssh import Inventory, SSHPool

pytestmark = pytest.mark.system
TOKEN = "@@scout-test-0003"


def sessions(host_dir: Path) -> int:
    """Sessions the host's sshd started (LogLevel VERBOSE logs each)."""
    return (host_dir / "sshd.log").read_text().count("Starting session:")


def walled_readers(topology: Topology) -> list[int]:
    """The worker's reader processes: the helper running `read-jobs`."""
    pids = []
    for pid in os.listdir("/proc"):
        try:
            line = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"read-jobs" in line and str(topology.worker.workdir / "jobs").encode() in line:
            pids.append(int(pid))
    return pids


def seen(records: list[JobRecord]) -> list[tuple[object, ...]]:
    return [(r.name, r.state, r.pid, r.command, r.tail, r.log_bytes) for r in records]


async def test_polls_open_no_session_and_read_what_awk_reads_inside_the_wall(
    sshd_topology: Topology,
) -> None:
    inventory = Inventory.from_dict(sshd_topology.inventory_data())
    name = f"resident-{os.getpid()}"
    async with SSHPool(inventory) as pool:
        await start_job(pool, "worker", name, "echo polled; sleep 30")
        try:

            async def logged() -> list[JobRecord] | None:
                records = (await job_status(pool, "worker", [name]))[1]
                return records if records[0].tail else None

            await until(logged, f"job {name} to log its line")
            before = sessions(sshd_topology.worker.workdir)
            polls = [(await job_status(pool, "worker", [name]))[1] for _ in range(5)]
            after = sessions(sshd_topology.worker.workdir)
            by_awk = await pool.run(
                "worker", status_command([name]), env=status_env(TOKEN, None), shell=False
            )
            readers = walled_readers(sshd_topology)
            status = [Path(f"/proc/{pid}/status").read_text() for pid in readers]
        finally:
            await stop_jobs(pool, "worker", [name], grace_s=1)

    assert after == before, "a poll opened an SSH session"
    assert seen(polls[-1]) == seen(parse_status("worker", by_awk.stdout, TOKEN)[1])
    assert seen(polls[-1])[0][:2] == (name, "running")
    assert len(readers) == 1, readers
    assert "NoNewPrivs:\t1" in status[0] and "Seccomp:\t2" in status[0]


async def test_a_reader_that_died_is_replaced_and_one_stuck_or_cancelled_is_ended(
    sshd_topology: Topology, monkeypatch: pytest.MonkeyPatch
) -> None:
    inventory = Inventory.from_dict(sshd_topology.inventory_data())
    name, stuck = f"replaced-{os.getpid()}", f"stuck-{os.getpid()}"
    folder = sshd_topology.worker.workdir / "jobs" / stuck
    async with SSHPool(inventory) as pool:
        await start_job(pool, "worker", name, "echo polled; sleep 30")
        try:
            await job_status(pool, "worker", [name])
            [first] = walled_readers(sshd_topology)
            os.kill(first, signal.SIGKILL)
            after_death = (await job_status(pool, "worker", [name]))[1]
            await job_status(pool, "worker", [name])
            [second] = walled_readers(sshd_topology)

            # a log that blocks its reader (a FIFO nobody writes): the poll times out
            folder.mkdir()
            (folder / "command").write_text("never\n")
            os.mkfifo(folder / "log")
            monkeypatch.setattr(host, "READ_TIMEOUT_S", 2.0)
            with pytest.raises(JobCommandError, match="timed out"):
                await job_status(pool, "worker", [stuck])
            gone = await until(lambda: walled_readers(sshd_topology) == [] or None, "its end")
            await job_status(pool, "worker", [name])
            cancelled = asyncio.ensure_future(job_status(pool, "worker", [stuck]))
            await asyncio.sleep(0.5)
            cancelled.cancel()
            gone_too = await until(lambda: walled_readers(sshd_topology) == [] or None, "its end")
            monkeypatch.undo()
            later = (await job_status(pool, "worker", [name]))[1]
        finally:
            shutil.rmtree(folder, ignore_errors=True)  # other tests list every job there
            await stop_jobs(pool, "worker", [name], grace_s=1)

    assert after_death[0].state == "running" and second != first
    assert gone and gone_too and later[0].state == "running"


async def test_a_read_the_reader_was_denied_is_read_outside_the_wall(
    sshd_topology: Topology,
) -> None:
    denied = Path("/sys/bus/pci/rescan")  # write-only: reading it is EACCES, root too
    if not denied.exists():
        pytest.skip(f"no {denied} here")
    inventory = Inventory.from_dict(sshd_topology.inventory_data())
    name = f"denied-{os.getpid()}"
    folder = sshd_topology.worker.workdir / "jobs" / name
    folder.mkdir(parents=True)
    (folder / "command").write_text("never\n")
    (folder / "started").write_text("1700000000\n")
    (folder / "log").symlink_to(denied)
    try:
        async with SSHPool(inventory) as pool:
            await job_status(pool, "worker", [f"other-{os.getpid()}"])  # the reader starts
            before = sessions(sshd_topology.worker.workdir)
            records = (await job_status(pool, "worker", [name]))[1]
            after = sessions(sshd_topology.worker.workdir)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    assert after == before + 1, "the denied read was not read again outside the wall"
    assert [(r.name, r.command) for r in records] == [(name, "never")]
