"""`job_start`: start a command as a named, detached job on one or several hosts.

The job survives the SSH connection and Scout; its folder on the host (tools/jobs/folder.py)
keeps its log and exit status for job_status, job_logs, job_wait and job_stop. To run it inside
a container, make `docker exec CONTAINER …` the command: its output is then in the job log.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tools.base import Tool, ToolContext, ToolResult
from tools.jobs.folder import NAME_PATTERN
from tools.jobs.host import START_TIMEOUT_S, JobCommandError, Started, start_job
from tools.jobs.params import check_env, unique
from tools.jobs.world_facts import jobs_started
from tools.risk.assessment import Risk, RiskAssessment
from tools.risk.shell_judge import ShellJudge
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool

CONNECT_ALLOWANCE_S = 30.0


class JobStartInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN, description="Job name, unique per host.")
    command: str = Field(min_length=1, description="Shell command (sh -c).")
    hosts: list[str] = Field(min_length=1)
    env: dict[str, str] | None = None
    cwd: str | None = None

    _env = field_validator("env")(check_env)


class JobStart(Tool[JobStartInput]):
    name = "job_start"
    description = (
        "Start a command as a named background job on hosts; it survives dropped connections "
        "and a restart of Scout."
    )
    Input = JobStartInput

    def __init__(self, pool: SSHPool, judge: ShellJudge) -> None:
        """`pool`: the session's SSH connections (the tool is only made with an inventory)."""
        self.pool = pool
        self.judge = judge

    def risk(self, params: JobStartInput) -> RiskAssessment:
        """The command's risk as ssh_exec would judge it; leaving a job running is a change."""
        verdict = self.judge(params.command, env=params.env, cwd=params.cwd)
        if verdict.risk >= Risk.MUTATING:
            return verdict
        return RiskAssessment(
            Risk.MUTATING, f"starts a job that keeps running on the host ({verdict.reason})"
        )

    def hosts(self, params: JobStartInput) -> list[str]:
        return unique(params.hosts)

    def commands(self, params: JobStartInput) -> list[tuple[str, str]] | None:
        """The command on each host: a job runs what a plan action names, only detached (a
        plan's engine step is a job). None with an env or a folder of its own, which no plan
        action written as a command carries."""
        if params.env or params.cwd:
            return None
        return [(host, params.command) for host in unique(params.hosts)]

    def timeout_s(self, params: JobStartInput) -> float | None:
        return START_TIMEOUT_S + CONNECT_ALLOWANCE_S

    def summary(self, params: JobStartInput) -> str:
        return f"{params.name}: " + " ".join(params.command.split())[:180]

    async def run(self, params: JobStartInput, ctx: ToolContext) -> ToolResult:
        pool, hosts = self.pool, unique(params.hosts)

        async def one(host: str) -> Started | str:
            try:
                return await start_job(
                    pool, host, params.name, params.command, env=params.env, cwd=params.cwd
                )
            except (SSHError, JobCommandError) as exc:
                return str(exc)

        outcomes = await asyncio.gather(*(one(host) for host in hosts))
        lines, jobs, failed = [], [], False
        for host, outcome in zip(hosts, outcomes, strict=True):
            if isinstance(outcome, str):
                failed = True
                lines.append(f"{host}: not started: {outcome}")
            elif outcome.exists:
                failed = True
                lines.append(
                    f"{host}: not started: a job named {params.name} already exists there; "
                    "read it with job_status, or start this one under another name"
                )
            else:
                lines.append(f"{host}: started {params.name} (pid {outcome.pid})")
                jobs.append(
                    {
                        "host": host,
                        "name": params.name,
                        "pid": outcome.pid,
                        "started_at": outcome.started,
                        "command": params.command,
                    }
                )
        jobs_started(ctx.world, jobs)
        return ToolResult(
            text="\n".join(lines), is_error=failed, data={"jobs": jobs}, meta={"hosts": hosts}
        )
