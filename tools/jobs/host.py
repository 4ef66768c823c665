"""Running the job scripts on hosts over the SSH pool: one command per host per operation.

Every remote command is wrapped as any other (tools/ssh/remote_command.py: killed on the host
at its timeout). Starting is never retried; reading is, by the caller (waiting.py), since
reading a job folder twice changes nothing.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from tools.jobs.records import JobRecord, parse_status
from tools.jobs.scripts import logs_script, start_script, stop_script
from tools.jobs.status_script import NO_PROGRAM, status_command, status_env, status_script
from tools.jobs.walled_read import walled_status
from tools.ssh.pool import SSHPool
from tools.ssh.remote_command import CommandResult

START_TIMEOUT_S = 30.0
READ_TIMEOUT_S = 30.0
STOP_MARGIN_S = 15.0


class JobCommandError(Exception):
    """A job script itself failed on the host (not the job)."""


@dataclass(frozen=True)
class Started:
    host: str
    name: str
    pid: int | None
    started: int | None
    exists: bool = False


def _token() -> str:
    return f"@@scout-{secrets.token_hex(6)}"


def _lines(result: CommandResult, token: str) -> list[str]:
    return [line[len(token) + 1 :] for line in result.stdout.splitlines() if line.startswith(token)]


def _failed(result: CommandResult, what: str) -> JobCommandError:
    said = (result.stderr or result.stdout).strip().splitlines()
    detail = said[-1] if said else "no output"
    if result.timed_out:
        return JobCommandError(f"{what} timed out on {result.host}; the host may be overloaded")
    return JobCommandError(f"{what} failed on {result.host} (exit {result.exit_status}): {detail}")


async def start_job(
    pool: SSHPool,
    host: str,
    name: str,
    command: str,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> Started:
    token = _token()
    script = start_script(name, command, token)
    result = await pool.run(host, script, timeout=START_TIMEOUT_S, cwd=cwd, env=env)
    lines = _lines(result, token)
    if not result.ok or not lines:
        raise _failed(result, f"starting job {name}")
    word, *rest = lines[-1].split()
    if word == "exists":
        return Started(host, name, None, None, exists=True)
    if word != "started" or len(rest) != 2:
        raise JobCommandError(
            f"job {name} on {host} was started but its runner never wrote a pid; "
            "check `setsid` and `sh` on the host, then read its status"
        )
    return Started(host, name, int(rest[0]), int(rest[1]))


async def job_status(
    pool: SSHPool, host: str, names: list[str] | None, *, until: str | None = None
) -> tuple[int | None, list[JobRecord]]:
    """The host's clock and one record per job, from one round trip: to the reader resident
    in the wall where the connection has one (walled_read.py), else one awk."""
    token = _token()
    if names is not None and until is None:
        try:
            walled = await walled_status(pool, host, names, token, READ_TIMEOUT_S)
        except TimeoutError:
            raise JobCommandError(
                f"reading job status timed out on {host}; the host may be overloaded"
            ) from None
        if walled is not None:
            return parse_status(host, walled, token)
    if names is not None:
        env = status_env(token, until)
        command = status_command(names)
        result = await pool.run(host, command, timeout=READ_TIMEOUT_S, env=env, shell=False)
        fell_short = not result.ok and not result.timed_out and token not in result.stdout
    else:
        result = await pool.run(host, status_script(None, token), timeout=READ_TIMEOUT_S)
        fell_short = result.ok and result.stdout.strip() == f"{token} {NO_PROGRAM}"
    if fell_short:  # no program in the job root (or a login shell that cannot run it)
        script = status_script(names, token, until, inline=True)
        result = await pool.run(host, script, timeout=READ_TIMEOUT_S)
    if not result.ok:
        raise _failed(result, "reading job status")
    return parse_status(host, result.stdout, token)


async def job_log(
    pool: SSHPool, host: str, name: str, *, lines: int, max_bytes: int, grep: str | None
) -> tuple[int, str] | None:
    """(log size in bytes, the requested lines), or None when the job does not exist."""
    token = _token()
    script = logs_script(name, token, lines, max_bytes, grep)
    result = await pool.run(host, script, timeout=READ_TIMEOUT_S)
    if not result.ok:
        raise _failed(result, f"reading the log of {name}")
    head, _, body = result.stdout.partition(f"{token} log\n")
    if f"{token} missing" in head:
        return None
    size = next((int(v.split()[1]) for v in _lines(result, token) if v.startswith("size")), 0)
    return size, body


async def stop_jobs(
    pool: SSHPool, host: str, names: list[str], *, grace_s: float
) -> dict[str, str]:
    """What stopping did per job: terminated, killed, ended CODE, notrunning, missing."""
    return (await stop_jobs_inside(pool, host, names, grace_s=grace_s))[0]


async def stop_jobs_inside(
    pool: SSHPool, host: str, names: list[str], *, grace_s: float
) -> tuple[dict[str, str], dict[str, str]]:
    """stop_jobs' outcome, and for each job in a container what stopping did there:
    `terminated|killed|gone CONTAINER` (tools/jobs/in_container.py)."""
    token = _token()
    timeout = 2 * grace_s * len(names) + STOP_MARGIN_S  # the group, then inside a container
    result = await pool.run(host, stop_script(names, token, grace_s), timeout=timeout)
    if not result.ok:
        raise _failed(result, "stopping jobs")
    outcome: dict[str, str] = {}
    inside: dict[str, str] = {}
    current = None
    for line in _lines(result, token):
        key, _, value = line.partition(" ")
        if key == "job":
            current = value
        elif current is not None and key == "inside":
            inside[current] = value
        elif current is not None and key != "end":
            outcome[current] = f"{key} {value}".strip()
    return outcome, inside
