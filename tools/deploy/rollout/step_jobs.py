"""Run a deployment step's action as a job and wait for it: started detached on its host
(tools/jobs/), waited on without model turns until it ends or its log shows `ready`, and judged
by its own log: a failed job ends with the log's own error line, not a guess.

Variables a step takes from the operator's environment (HF_TOKEN) are read here, at run time,
and go only into the job's environment: never into the plan, the tool input or its result.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

from tools.deploy.fabric.nccl_test import FABRIC_TEST_JOB, fabric_measurement
from tools.deploy.launch.parts import FAILED_LINE
from tools.deploy.steps import DeployStep
from tools.jobs.host import JobCommandError, job_log, start_job
from tools.jobs.waiting import wait_for_jobs
from tools.jobs.world_facts import jobs_read, jobs_started
from tools.recon.image_probe import parse_contents
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool
from tools.world.store import WorldStore

LOG_LINES = 400

#: the job that asks an image what it runs: its log is read into the world model, not just shown
IMAGE_CHECK_JOB = "image-check"


async def run_step_job(
    pool: SSHPool,
    step: DeployStep,
    *,
    wait_s: float,
    report: Callable[[str], None],
    environ: Mapping[str, str] | None = None,
    world: WorldStore | None = None,
) -> tuple[int | None, str]:
    """(0, what the log says) when the job ended well or logged `ready`, else (code, why).

    The job and each poll of it are handed to `world` as the job tools do (its progress then
    shows in the world model and the transcript), and the fabric test's bandwidth too."""
    name = step.job or ""
    source = os.environ if environ is None else environ
    env = {k: source[k] for k in step.operator_env if source.get(k)}
    try:
        started = await start_job(pool, step.host, name, step.actions[0], env=env or None)
    except (SSHError, JobCommandError) as exc:
        return None, f"job {name} did not start on {step.host}: {exc}"
    if started.exists:
        return 1, (
            f"a job named {name} already exists on {step.host}: read it with job_status or "
            "job_logs; stop or rename it before running this step again"
        )
    jobs_started(world, [{"host": step.host, "name": name, "command": step.actions[0]}])
    if not step.wait:
        return 0, f"job {name} started on {step.host} (pid {started.pid}); it runs on"
    outcome = await wait_for_jobs(
        pool,
        {step.host: [name]},
        pattern=step.ready,
        first=True,
        timeout_s=wait_s,
        report=report,
        observe=lambda host, seen: jobs_read(world, host, seen),
    )
    record = outcome.records.get((step.host, name))
    if record is None:
        why = outcome.unreachable.get(step.host, "no status")
        return None, f"job {name} on {step.host}: {why}; it may still be running (job_status)"
    if outcome.reason == "waiting" and record.progress is not None:
        return None, (
            f"job {name} on {step.host} is stuck waiting: {record.progress.waiting} (it keeps "
            "running; fix what it waits on, or stop it with job_stop)"
        )
    if outcome.reason == "timeout":
        return None, (
            f"job {name} still running after {wait_s:g} s (it keeps running; follow it with "
            f"job_wait, then run this step's check): {record.tail[-300:]}"
        )
    read = record.progress.error if record.progress is not None else None
    error = read or await _error_line(pool, step.host, name)
    if record.failed or (record.match and re.search(FAILED_LINE, record.match)):
        code = record.exit_code if record.exit_code not in (None, 0) else 1
        return code, f"job {name} failed on {step.host}: {error or record.tail[-500:]}"
    return 0, await _summary(pool, step, record.tail, world)


async def _error_line(pool: SSHPool, host: str, name: str) -> str | None:
    """The last line of the job's log that names an error (a traceback ends with it)."""
    try:
        found = await job_log(pool, host, name, lines=1, max_bytes=2000, grep=FAILED_LINE)
    except (SSHError, JobCommandError):
        return None
    if found is None or not found[1].strip():
        return None
    return found[1].strip().splitlines()[-1]


async def _summary(pool: SSHPool, step: DeployStep, tail: str, world: WorldStore | None) -> str:
    """What the job's log says; for the fabric test, the bandwidth and its verdict, and for an
    image check, what the image runs: the world model keeps both."""
    if step.job not in (IMAGE_CHECK_JOB, FABRIC_TEST_JOB):
        return tail[-500:]
    found = await job_log(pool, step.host, step.job, lines=LOG_LINES, max_bytes=20000, grep=None)
    if step.job == IMAGE_CHECK_JOB:
        return _image_contents(step, found[1] if found else tail, world)
    measured = fabric_measurement(found[1] if found else tail, step.host)
    if measured is None:
        return tail[-500:]
    if world is not None:
        world.record_fabric_test(measured)
    busbw, finding = measured.busbw_gb_s, measured.finding
    line = f"measured bus bandwidth {busbw:g} GB/s ({busbw * 8:.0f} Gb/s)"
    return line + (f"; finding: {finding.message}. {finding.fix}" if finding else "")


def _image_contents(step: DeployStep, log: str, world: WorldStore | None) -> str:
    """The engine versions the image printed, which the world model keeps."""
    found = parse_contents(log)
    if not found:
        return log[-500:]
    lines = []
    for ref, contents in found.items():
        if world is not None:
            world.record_image_contents(step.host, ref, contents)
        lines.append(f"{ref} on {step.host} holds {contents.words()}")
    return "; ".join(lines)
