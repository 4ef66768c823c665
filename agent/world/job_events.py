"""World job changes as transcript events: starts, ends and throttled progress samples.

A wait polls every few seconds; recording each poll would fill the transcript with one line
per job per poll. So a job's start, end, change of state and first sighting are recorded
always, and its progress at most once per PROGRESS_EVERY_S (and only when the progress line
changed); the end carries the exit status and the log's last lines.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agent.loop.events import JobEvent
from tools.world.jobs import JobFact

PROGRESS_EVERY_S = 2.0
JobListener = Callable[[JobFact | None, JobFact, bool], None]


def job_event_listener(
    emit: Callable[[JobEvent], object], *, every_s: float = PROGRESS_EVERY_S
) -> JobListener:
    """A world job listener that records each change worth keeping (pass recorder.emit)."""
    last_sample: dict[str, float] = {}

    def listener(before: JobFact | None, fact: JobFact, started: bool) -> None:
        kind = _kind(before, fact, started)
        if kind == "progress":
            now = time.monotonic()
            if before is not None and before.progress == fact.progress:
                return
            if now - last_sample.get(fact.key, -every_s) < every_s:
                return
            last_sample[fact.key] = now
        elif kind is None:
            return
        emit(
            JobEvent(
                kind=kind,
                host=fact.host,
                name=fact.name,
                state=fact.state,
                command=fact.command,
                exit_code=fact.exit_code,
                elapsed_s=fact.elapsed_s,
                progress=fact.progress,
                fraction=fact.fraction,
                tail=fact.tail if fact.finished else "",
                why=fact.why_unknown,
            )
        )

    return listener


def _kind(before: JobFact | None, fact: JobFact, started: bool) -> str | None:
    if started:
        return "start"
    if fact.state == "unknown":
        return "unknown" if before is None or before.state != "unknown" else None
    if fact.finished:
        return "end" if before is None or not before.finished else None
    if before is None or before.state in ("unknown", "starting") or before.finished:
        return "found"
    return "progress"
