"""`job_wait`: wait for jobs to end or to log a pattern, showing their progress meanwhile.

The wait costs no model turns: it polls the jobs' status (one round trip per host), reports
each change through the face's progress line, rides out dropped connections, and returns when
all jobs (or the first, with `first`) have ended or logged `pattern`, or at `timeout`. A timed
out wait leaves the jobs running.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tools.base import Tool, ToolContext, ToolResult
from tools.job_status import status_result
from tools.jobs.params import check_names, unique
from tools.jobs.waiting import wait_for_jobs
from tools.jobs.world_facts import jobs_read
from tools.ssh.pool import SSHPool

MAX_WAIT_S = 6 * 3600
RESULT_ALLOWANCE_S = 60.0


class JobWaitInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hosts: list[str] = Field(min_length=1)
    names: list[str] = Field(min_length=1, description="Job names (on every host given).")
    pattern: str | None = Field(
        None, description="Also return when a log matches this `grep -E` pattern."
    )
    first: bool = Field(False, description="Return when the first job is done, not all.")
    timeout: float = Field(
        900, gt=0, le=MAX_WAIT_S, description="Seconds; jobs keep running after."
    )

    _names = field_validator("names")(check_names)


class JobWait(Tool[JobWaitInput]):
    name = "job_wait"
    description = (
        "Wait for jobs to end, streaming their progress to the user (no model turns used); "
        "returns their status."
    )
    Input = JobWaitInput

    def __init__(self, pool: SSHPool) -> None:
        """`pool`: the session's SSH connections (the tool is only made with an inventory)."""
        self.pool = pool

    def hosts(self, params: JobWaitInput) -> list[str]:
        return unique(params.hosts)

    def timeout_s(self, params: JobWaitInput) -> float | None:
        return params.timeout + RESULT_ALLOWANCE_S

    async def run(self, params: JobWaitInput, ctx: ToolContext) -> ToolResult:
        hosts = unique(params.hosts)
        outcome = await wait_for_jobs(
            self.pool,
            {host: list(params.names) for host in hosts},
            pattern=params.pattern,
            first=params.first,
            timeout_s=params.timeout,
            report=ctx.report,
            observe=lambda host, outcome: jobs_read(ctx.world, host, outcome),
        )
        per_host = [
            outcome.unreachable.get(h) or [r for (rh, _), r in outcome.records.items() if rh == h]
            for h in hosts
        ]
        result = status_result(hosts, per_host, ctx)
        head = {
            "done": "all jobs are done",
            "first": "a job is done",
            "pattern": f"the pattern {params.pattern!r} appeared",
            "waiting": "a job is stuck waiting on something that is not coming (see its "
            "progress); waiting longer will not help: fix what it waits on, or stop it",
            "timeout": f"still waiting after {params.timeout:g} s; the jobs keep running",
        }[outcome.reason]
        if outcome.reconnects:
            head += f" (the connection dropped and was re-established {outcome.reconnects}x)"
        result.text = f"{head}\n\n{result.text}"
        result.data["reason"] = outcome.reason
        failed = any(r.failed for r in outcome.records.values())
        result.is_error = result.is_error or failed or outcome.reason == "waiting"
        return result
