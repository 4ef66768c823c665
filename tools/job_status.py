"""`job_status`: state, progress and log tail of jobs, one round trip per host.

Each job is running, exited (with its exit code), stopped, lost (its runner died without an
exit status) or missing; progress is read from the log of the tools this field runs
(tools/jobs/progress). A host that does not answer is reported as unreachable: its jobs'
state is unknown, not failed.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tools.base import Tool, ToolContext, ToolResult
from tools.jobs.host import READ_TIMEOUT_S, JobCommandError, job_status
from tools.jobs.params import check_names, unique
from tools.jobs.records import JobRecord
from tools.jobs.render import render_record
from tools.jobs.world_facts import jobs_read
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool
from tools.text.bounded import bound_text

CONNECT_ALLOWANCE_S = 30.0


class JobStatusInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hosts: list[str] = Field(min_length=1)
    names: list[str] | None = Field(None, description="Job names (default: all on the hosts).")

    _names = field_validator("names")(check_names)


class JobStatus(Tool[JobStatusInput]):
    name = "job_status"
    description = (
        "State (running/exited+code/stopped/lost), elapsed time, progress and last log lines "
        "of jobs on hosts."
    )
    Input = JobStatusInput

    def __init__(self, pool: SSHPool) -> None:
        """`pool`: the session's SSH connections (the tool is only made with an inventory)."""
        self.pool = pool

    def hosts(self, params: JobStatusInput) -> list[str]:
        return unique(params.hosts)

    def timeout_s(self, params: JobStatusInput) -> float | None:
        return READ_TIMEOUT_S + CONNECT_ALLOWANCE_S

    async def run(self, params: JobStatusInput, ctx: ToolContext) -> ToolResult:
        pool, hosts = self.pool, unique(params.hosts)

        async def one(host: str) -> list[JobRecord] | str:
            try:
                return (await job_status(pool, host, params.names))[1]
            except (SSHError, JobCommandError) as exc:
                return str(exc)

        outcomes = await asyncio.gather(*(one(host) for host in hosts))
        for host, outcome in zip(hosts, outcomes, strict=True):
            jobs_read(ctx.world, host, outcome)
        return status_result(hosts, outcomes, ctx)


def status_result(
    hosts: list[str], outcomes: list[list[JobRecord] | str], ctx: ToolContext
) -> ToolResult:
    """Text and data for records per host (or why a host could not be read)."""
    sections, jobs, unreachable = [], [], {}
    for host, outcome in zip(hosts, outcomes, strict=True):
        if isinstance(outcome, str):
            unreachable[host] = outcome
            sections.append(f"== {host}: unreachable; its jobs' state is unknown ==\n{outcome}")
            continue
        if not outcome:
            sections.append(f"== {host}: no jobs ==")
        for record in outcome:
            sections.append(render_record(record))
            jobs.append(record.facts())
    text = bound_text("\n\n".join(sections), spill_dir=ctx.spill_dir, label="job_status")
    failed = bool(unreachable) or any(j["state"] in ("lost", "missing") for j in jobs)
    return ToolResult(
        text=text.text,
        is_error=failed,
        data={"jobs": jobs, "unreachable": unreachable},
        meta={"hosts": hosts, "truncated": text.truncated},
    )
