"""What the job tools just learned, handed to the world store as typed job facts.

As tools/docker/world_facts.py does for containers: job_start hands over the jobs it started,
job_status and every poll of job_wait the records they read, job_stop the jobs it ended; a
host that did not answer makes its jobs `unknown` (never failed).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tools.jobs.progress.lines import screen_lines
from tools.jobs.records import JobRecord
from tools.world.jobs import TAIL_CHARS, JobFact, command_summary
from tools.world.store import WorldStore

TAIL_LINES = 12


def record_fact(record: JobRecord) -> JobFact:
    progress = record.progress
    tail = ""
    if record.finished:
        tail = "\n".join(screen_lines(record.tail)[-TAIL_LINES:])[-TAIL_CHARS:]
    return JobFact(
        host=record.host,
        name=record.name,
        command=command_summary(record.command),
        state=record.state,
        exit_code=record.exit_code,
        elapsed_s=record.elapsed_s,
        progress=progress.summary if progress else None,
        fraction=progress.fraction if progress else None,
        ready=bool(progress and progress.ready),
        tail=tail,
        seen_at=datetime.now(UTC),
    )


def jobs_started(world: WorldStore | None, jobs: list[dict[str, Any]]) -> None:
    """job_start's `data.jobs` rows: each job now runs on its host."""
    if world is None:
        return
    now = datetime.now(UTC)
    for job in jobs:
        world.record_job(
            JobFact(
                host=job["host"],
                name=job["name"],
                command=command_summary(job["command"]),
                state="running",
                elapsed_s=0,
                seen_at=now,
            ),
            started=True,
        )


def jobs_read(world: WorldStore | None, host: str, outcome: list[JobRecord] | str) -> None:
    """One host's records from a status read, or why the host could not be read."""
    if world is None:
        return
    if isinstance(outcome, str):
        world.jobs_unknown(host, outcome)
        return
    for record in outcome:
        if record.state == "missing" and world.jobs.get(f"{host}/{record.name}") is None:
            continue  # asked about a job Scout never knew: nothing to remember
        world.record_job(record_fact(record))


def jobs_stopped(world: WorldStore | None, host: str, names: list[str]) -> None:
    """job_stop ended these jobs on `host`."""
    if world is None:
        return
    for name in names:
        fact = world.jobs.get(f"{host}/{name}")
        if fact is not None and not fact.finished:
            world.record_job(fact.model_copy(update={"state": "stopped", "tail": ""}))
