"""Finding a resumed session's jobs on their hosts: what finished while Scout was away, what
still runs (re-attached: the world model follows it again), what cannot be known.

One status round trip per host, as job_status does, run by Scout itself (reading a job folder
changes nothing, so no gate is asked). A host that does not answer leaves its jobs `unknown`,
never failed: the job may well run on. The report goes to the person (a notice) and to the
model (with the first message of the resumed session).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from datetime import UTC, datetime

from agent.loop.resumed import KnownJob
from tools.jobs.host import JobCommandError, job_status
from tools.jobs.records import JobRecord
from tools.jobs.render import render_record
from tools.jobs.world_facts import record_fact
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool
from tools.world.jobs import FINISHED_STATES, JobFact, command_summary
from tools.world.store import WorldStore

NO_INVENTORY = "no inventory is loaded, so no host can be asked"


async def reattach_jobs(
    pool: SSHPool | None, world: WorldStore, known: dict[str, KnownJob]
) -> str | None:
    """Read every job the transcript left unfinished; the report, or None without such jobs."""
    waiting = [job for job in known.values() if job.state not in FINISHED_STATES]
    if not waiting:
        return None
    by_host: dict[str, list[KnownJob]] = defaultdict(list)
    for job in waiting:
        by_host[job.host].append(job)
    outcomes = await asyncio.gather(*(_read(pool, h, jobs) for h, jobs in by_host.items()))
    finished, running, gone, unknown = [], [], [], []
    for (host, jobs), outcome in zip(by_host.items(), outcomes, strict=True):
        if isinstance(outcome, str):
            for job in jobs:
                world.record_job(_unknown(job, outcome))
            names = ", ".join(job.name for job in jobs)
            unknown.append(f"{host}: {names}: state unknown, {host} did not answer ({outcome})")
            continue
        for record in outcome:
            world.record_job(record_fact(record))
            shown = render_record(record)
            if record.state == "missing":
                gone.append(shown)
            else:
                (finished if record.finished else running).append(shown)
    return _report(finished, running, gone, unknown)


async def _read(pool: SSHPool | None, host: str, jobs: list[KnownJob]) -> list[JobRecord] | str:
    if pool is None:
        return NO_INVENTORY
    try:
        return (await job_status(pool, host, [job.name for job in jobs]))[1]
    except (SSHError, JobCommandError) as exc:
        return str(exc)


def _unknown(job: KnownJob, why: str) -> JobFact:
    return JobFact(
        host=job.host,
        name=job.name,
        command=command_summary(job.command),
        state="unknown",
        why_unknown=why,
        seen_at=datetime.now(UTC),
    )


def _report(finished: list[str], running: list[str], gone: list[str], unknown: list[str]) -> str:
    parts = ["Jobs of the resumed session, read on their hosts just now:"]
    if finished:
        parts += ["Finished while Scout was away:", *finished]
    if running:
        parts += ["Still running (re-attached; job_wait or job_status follows them):", *running]
    if gone:
        parts += ["Not found (their job folders are gone from the hosts):", *gone]
    if unknown:
        parts += ["Not reachable (the jobs may still run; ask again later):", *unknown]
    return "\n".join(parts)
