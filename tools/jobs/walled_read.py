"""Job status polls through a reader resident inside the wall: no session, shell or awk a poll.

A poll over its own SSH session costs the host more than the read itself: sshd's session, the
login shell, `timeout`, and awk's start, for a few small files (bench/jobs.py). So where the
connection has the wall's fork-server (tools/ssh/wall_server.py), the first poll starts the
job reader there as a resident walled call (tools/wall/host_job_reader.py: the same wall as any
read, built once) and every poll after it is one request line on that call's stdin, answered
with the records the awk program prints. The reader takes its limits and milestone pattern
from tools/jobs/status_script.py, so both reads print the same records.

Where there is no server (no python3, no Landlock: the wall refuses) or the reader cannot
start, where it was denied a file (the read outside the wall decides what it holds), and for
a poll that waits for a pattern (an awk ERE, not Python's), the caller polls
with awk as before (tools/jobs/host.py). A reader that ended is started again on the next
poll; one that does not answer in time is ended on the host, and the poll times out.
"""

from __future__ import annotations

import asyncio
import secrets
import shlex

import structlog

from tools.jobs.folder import JOB_ROOT, check_name
from tools.jobs.status_script import (
    COMMAND_CHARS,
    MILESTONE_CHARS,
    MILESTONE_LINES,
    MILESTONES,
    TAIL_BYTES,
)
from tools.ssh.pool import SSHPool
from tools.ssh.wall_server import ResidentCall, WallServer
from tools.wall.command import WallSpec, helper_line
from tools.wall.host_job_reader import DENIED, READY_LINE

log = structlog.get_logger()
START_TIMEOUT_S = 30.0
RESIDENT = "job-reader"  # its name among the server's resident calls


def reader_command() -> str:
    """The walled call that runs the reader over the job root, with the status program's
    limits and milestone pattern."""
    limits = " ".join(str(n) for n in (TAIL_BYTES, MILESTONE_LINES, MILESTONE_CHARS, COMMAND_CHARS))
    return helper_line(f'read-jobs "{JOB_ROOT}" {limits} {shlex.quote(MILESTONES)}')


async def walled_status(
    pool: SSHPool, host: str, names: list[str], token: str, timeout: float
) -> str | None:
    """The status program's output for the jobs `names` from the host's resident reader; None
    where there is none (then poll with awk). A TimeoutError when it does not answer."""
    server = await pool.wall_server(host)
    if server is None:
        return None
    starting = server.residents.get(RESIDENT)
    if starting is None or _worn_out(starting):
        starting = server.residents[RESIDENT] = asyncio.ensure_future(_start(server, host))
    reader = await asyncio.shield(starting)
    if reader is None:
        return None
    request = "\0".join([token, *(check_name(name) for name in names)]) + "\n"
    try:
        answer = await reader.ask(request.encode(), f"{token} end\n".encode(), timeout)
    except ConnectionError:  # it ended (its channel, or itself): awk this time, a new one next
        log.info("jobs.walled_reader_ended", host=host)
        return None
    text = answer.decode("utf-8", "replace")
    if text.startswith(token + DENIED.decode()):  # a denied read is no answer: awk, outside
        log.info("jobs.walled_read_denied", host=host, said=text.splitlines()[0][len(token) :])
        return None
    return text


def _worn_out(starting: asyncio.Future[ResidentCall | None]) -> bool:
    """A reader that started and has since ended (one that could not start stays so)."""
    if not starting.done():
        return False
    if starting.cancelled() or starting.exception() is not None:
        return True
    reader = starting.result()
    return reader is not None and reader.ended


async def _start(server: WallServer, host: str) -> ResidentCall | None:
    """The reader, answering; None where it cannot start (what it said is logged)."""
    marker = f"scout-run-{secrets.token_hex(8)}"
    try:
        reader = server.open(reader_command(), wall=WallSpec(), marker=marker)
    except ConnectionError:  # the server's channel closed: the pool starts another
        return None
    try:
        await reader.read_until(READY_LINE, START_TIMEOUT_S)
    except (ConnectionError, TimeoutError):
        log.info("jobs.walled_reader_refused", host=host, said=reader.said()[:300])
        await reader.close()
        return None
    return reader
