"""Waiting on jobs without model turns: poll their status, report what changes, stop when done.

One status round trip per host per poll. A host that stops answering is retried (the pool
reconnects) until the wait's deadline: reading a job folder is safe to repeat, and the job
itself is never touched, so it runs on while the connection is down.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tools.jobs.host import JobCommandError, job_status
from tools.jobs.records import JobRecord
from tools.jobs.render import progress_line
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool

FIRST_POLL_S = 0.5
MAX_POLL_S = 5.0
POLL_GROWTH = 1.5
RETRYING = "retrying until the wait's timeout (the jobs keep running on the host)"


@dataclass
class WaitOutcome:
    records: dict[tuple[str, str], JobRecord]
    reason: str  # "done", "first", "pattern", "waiting", "timeout"
    unreachable: dict[str, str] = field(default_factory=dict)
    reconnects: int = 0


def _settled(record: JobRecord, pattern: str | None) -> bool:
    return record.finished or (pattern is not None and record.match is not None) or _stuck(record)


def _stuck(record: JobRecord) -> bool:
    """A running job whose log says it waits on what will not come, or that it cannot finish
    (no disk for what it fetches): waiting longer is futile."""
    progress = record.progress
    if record.finished or progress is None:
        return False
    return bool(progress.waiting) or "will_not_finish" in progress.facts


async def wait_for_jobs(
    pool: SSHPool,
    targets: dict[str, list[str]],
    *,
    pattern: str | None,
    first: bool,
    timeout_s: float,
    report: Callable[[str], None],
    observe: Callable[[str, list[JobRecord] | str], None] = lambda host, outcome: None,
    poll_s: float = FIRST_POLL_S,
) -> WaitOutcome:
    """Wait until every job (or the first, with `first`) ends or logs `pattern`, or timeout.

    `observe(host, records or why unreachable)` hears every poll (the world model's job facts:
    the face shows an unreachable host's jobs as unknown, with the retry, and again once read).
    """
    deadline = time.monotonic() + timeout_s
    outcome = WaitOutcome({}, "timeout")
    shown: dict[tuple[str, str], str] = {}
    interval = poll_s
    while True:
        results = await asyncio.gather(
            *(_poll(pool, host, names, pattern) for host, names in targets.items())
        )
        for host, result in zip(targets, results, strict=True):
            if isinstance(result, str):
                # the world hears it too: its job events carry it to the face and the transcript
                retrying = f"{result}; {RETRYING}"
                observe(host, retrying)
                if host not in outcome.unreachable:
                    report(f"{host}: {retrying}")
                outcome.unreachable[host] = result
                continue
            observe(host, result)
            if outcome.unreachable.pop(host, None) is not None:
                outcome.reconnects += 1
                report(f"{host}: reachable again")
            for record in result:
                key = (host, record.name)
                outcome.records[key] = record
                line = progress_line(record)
                if shown.get(key) != line:
                    shown[key] = line
                    report(line)
        wanted = [(h, n) for h, names in targets.items() for n in names]
        settled = [
            k for k in wanted if k in outcome.records and _settled(outcome.records[k], pattern)
        ]
        if any(_stuck(outcome.records[k]) for k in settled):
            outcome.reason = "waiting"
            return outcome
        if first and settled:
            outcome.reason = "pattern" if outcome.records[settled[0]].match else "first"
            return outcome
        if len(settled) == len(wanted):
            matched = pattern is not None and all(outcome.records[k].match for k in wanted)
            outcome.reason = "pattern" if matched else "done"
            return outcome
        left = deadline - time.monotonic()
        if left <= 0:
            return outcome
        await asyncio.sleep(min(interval, left))
        interval = min(MAX_POLL_S, interval * POLL_GROWTH)


async def _poll(
    pool: SSHPool, host: str, names: list[str], pattern: str | None
) -> list[JobRecord] | str:
    try:
        _now, records = await job_status(pool, host, names, until=pattern)
    except (SSHError, JobCommandError) as exc:
        return str(exc)
    return records
