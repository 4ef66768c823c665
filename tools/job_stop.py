"""`job_stop`: end jobs by signalling their whole process group (TERM, then KILL)."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tools.base import Tool, ToolContext, ToolResult
from tools.jobs.host import STOP_MARGIN_S, JobCommandError, stop_jobs_inside
from tools.jobs.params import check_names, unique
from tools.jobs.world_facts import jobs_stopped
from tools.risk.assessment import Risk, RiskAssessment
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool

CONNECT_ALLOWANCE_S = 30.0
_SAID = {
    "terminated": "stopped (its process group ended on TERM)",
    "killed": "stopped (its process group did not end on TERM and was killed)",
    "notrunning": "was not running",
    "missing": "no such job on this host",
}


def _inside(said: str | None) -> str:
    """What stopping did inside the job's container, if it runs `docker exec` (a killed exec
    client leaves its process running there: tools/jobs/in_container.py)."""
    if not said:
        return ""
    word, _, container = said.partition(" ")
    return {
        "terminated": f"; its process inside container {container} ended on TERM",
        "killed": f"; its process inside container {container} was killed",
        "gone": f"; its process inside container {container} had already ended",
    }.get(word, f"; inside container {container}: {word}")


class JobStopInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hosts: list[str] = Field(min_length=1)
    names: list[str] = Field(min_length=1)
    grace: float = Field(10, ge=0, le=120, description="Seconds between TERM and KILL.")

    _names = field_validator("names")(check_names)


class JobStop(Tool[JobStopInput]):
    name = "job_stop"
    description = "Stop jobs: TERM their whole process group, KILL after `grace` seconds."
    Input = JobStopInput

    def __init__(self, pool: SSHPool) -> None:
        """`pool`: the session's SSH connections (the tool is only made with an inventory)."""
        self.pool = pool

    def risk(self, params: JobStopInput) -> RiskAssessment:
        return RiskAssessment(
            Risk.DESTRUCTIVE, f"ends jobs {', '.join(params.names)} and every process they started"
        )

    def hosts(self, params: JobStopInput) -> list[str]:
        return unique(params.hosts)

    def timeout_s(self, params: JobStopInput) -> float | None:
        return 2 * params.grace * len(params.names) + STOP_MARGIN_S + CONNECT_ALLOWANCE_S

    async def run(self, params: JobStopInput, ctx: ToolContext) -> ToolResult:
        pool, hosts = self.pool, unique(params.hosts)

        async def one(host: str) -> tuple[dict[str, str], dict[str, str]] | str:
            try:
                return await stop_jobs_inside(pool, host, params.names, grace_s=params.grace)
            except (SSHError, JobCommandError) as exc:
                return str(exc)

        outcomes = await asyncio.gather(*(one(host) for host in hosts))
        lines, stopped, failed = [], [], False
        for host, outcome in zip(hosts, outcomes, strict=True):
            if isinstance(outcome, str):
                failed = True
                lines.append(f"{host}: could not stop: {outcome}")
                continue
            said_of, inside = outcome
            for name, said in said_of.items():
                word, _, code = said.partition(" ")
                text = f"had already ended (exit {code})" if word == "ended" else _SAID[word]
                lines.append(f"{host}/{name}: {text}{_inside(inside.get(name))}")
                failed = failed or word == "missing"
                if word in ("terminated", "killed"):
                    stopped.append({"host": host, "name": name, "how": word})
            jobs_stopped(ctx.world, host, [s["name"] for s in stopped if s["host"] == host])
        return ToolResult(text="\n".join(lines), is_error=failed, data={"stopped": stopped})
