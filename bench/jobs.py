"""Job status at scale: one job_status round for N hosts × M jobs against one ssh_exec fan-out.

Starts N OpenSSH sshd on 127.0.0.1 (bench/ssh_fanout.py's farm; each host keeps its job folders
in the farm's temp dir), starts M jobs on every host (each printing a line a second), then, on
warm pooled connections, alternates a job_status of all N×M jobs (one round trip per host) with
an ssh_exec of `true` on the same hosts, and prints the medians (and, for reference, the ratio of
an ssh_exec that starts awk under `sh -c`, as a status round did before it was read by the job
reader resident in the wall, tools/jobs/walled_read.py); last line:
`jobs status N=16x4: X.XX s, ratio to one fan-out: Y.YY` (the goal is a ratio of 1.2 or less).
Both sides are measured warm: a first status round starts each host's reader (once per
connection, as for a session that polls), a first fan-out opens the connections.

    .venv/bin/python bench/jobs.py [--hosts 16] [--jobs 4] [--reps 7]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.safety.shell.judge import judge_shell
from bench.ssh_fanout import SSHD, SshdFarm
from tools.base import ToolContext, ToolResult
from tools.job_start import JobStart, JobStartInput
from tools.job_status import JobStatus, JobStatusInput
from tools.job_stop import JobStop, JobStopInput
from tools.ssh import SSHPool
from tools.ssh_exec import SSHExec, SSHExecInput

BARE_AWK = "exec awk 'BEGIN { exit }'"
JOB_COMMAND = "i=0; while [ $i -lt 3600 ]; do i=$((i+1)); echo step $i; sleep 1; done"


def checked(result: ToolResult) -> ToolResult:
    if result.is_error:
        raise RuntimeError(result.text[:2000])
    return result


async def measure(
    farm: SshdFarm, jobs: int, reps: int, spill: Path
) -> tuple[list[float], list[float], list[float]]:
    inventory = farm.inventory()
    hosts = inventory.names()
    names = [f"bench-{i}" for i in range(jobs)]
    async with SSHPool(inventory, channels_per_connection=8) as pool:
        ctx = ToolContext(spill_dir=spill)
        starter = JobStart(pool, judge_shell)
        shell = SSHExec(pool, judge_shell)
        try:  # the jobs outlive this process: stop them whatever happens here
            for name in names:
                checked(
                    await starter.run(
                        JobStartInput(name=name, command=JOB_COMMAND, hosts=hosts), ctx
                    )
                )
            fan_out = SSHExecInput(hosts=hosts, command="true")
            bare_awk = SSHExecInput(hosts=hosts, command=BARE_AWK)
            status = JobStatusInput(hosts=hosts, names=names)
            checked(await shell.run(fan_out, ctx))  # both sides on warm connections
            checked(await JobStatus(pool).run(status, ctx))  # and the hosts' readers started
            status_times, fan_out_times, awk_times = [], [], []
            for _ in range(reps):
                started = time.perf_counter()
                result = checked(await JobStatus(pool).run(status, ctx))
                status_times.append(time.perf_counter() - started)
                running = sum(1 for job in result.data["jobs"] if job["state"] == "running")
                if running != len(hosts) * jobs:
                    raise RuntimeError(f"only {running} jobs are running:\n{result.text[:2000]}")
                started = time.perf_counter()
                checked(await shell.run(fan_out, ctx))
                fan_out_times.append(time.perf_counter() - started)
                started = time.perf_counter()
                checked(await shell.run(bare_awk, ctx))
                awk_times.append(time.perf_counter() - started)
        finally:
            await JobStop(pool).run(JobStopInput(hosts=hosts, names=names, grace=2), ctx)
    return status_times, fan_out_times, awk_times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    if os.geteuid() != 0 or not Path(SSHD).exists():
        sys.exit("bench/jobs.py needs root and /usr/sbin/sshd (openssh-server).")
    with tempfile.TemporaryDirectory(prefix="scout-jobs-bench-") as tmp:
        farm = SshdFarm(Path(tmp), args.hosts)
        try:
            status_times, fan_out_times, awk_times = asyncio.run(
                measure(farm, args.jobs, args.reps, Path(tmp) / "spill")
            )
        finally:
            farm.stop()
    status_s, fan_out_s = statistics.median(status_times), statistics.median(fan_out_times)
    # each status round ran right before its fan-out: the median of those pairs' ratios is what
    # machine load disturbs least
    ratio = statistics.median(s / f for s, f in zip(status_times, fan_out_times, strict=True))
    print(f"job_status of {args.hosts * args.jobs} jobs (median of {args.reps}): {status_s:.3f} s")
    print(f"ssh_exec true on {args.hosts} hosts (median of {args.reps}): {fan_out_s:.3f} s")
    # for reference: a program started through ssh_exec's `sh -c` (a status round starts awk
    # alone, without that shell, so it may come in under this line)
    floor = statistics.median(a / f for a, f in zip(awk_times, fan_out_times, strict=True))
    print(f"ssh_exec {BARE_AWK} (sh, then a program, nothing read): ratio {floor:.2f}")
    summary = f"jobs status N={args.hosts}x{args.jobs}: {status_s:.2f} s"
    print(f"{summary}, ratio to one fan-out: {ratio:.2f}")


if __name__ == "__main__":
    main()
