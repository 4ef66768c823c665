"""`job_logs`: the end of one job's log (optionally only lines matching a pattern)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tools.base import Tool, ToolContext, ToolResult
from tools.jobs.folder import NAME_PATTERN
from tools.jobs.host import READ_TIMEOUT_S, JobCommandError, job_log
from tools.jobs.progress.lines import screen_lines
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool
from tools.text.bounded import bound_text

CONNECT_ALLOWANCE_S = 30.0
MAX_LOG_BYTES = 1_000_000


class JobLogsInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    host: str
    name: str = Field(pattern=NAME_PATTERN)
    lines: int = Field(200, ge=1, le=5000, description="Last N lines.")
    grep: str | None = Field(None, description="Only lines matching this `grep -E` pattern.")


class JobLogs(Tool[JobLogsInput]):
    name = "job_logs"
    description = "Last lines of a job's log (stdout and stderr together)."
    Input = JobLogsInput

    def __init__(self, pool: SSHPool) -> None:
        """`pool`: the session's SSH connections (the tool is only made with an inventory)."""
        self.pool = pool

    def hosts(self, params: JobLogsInput) -> list[str]:
        return [params.host]

    def timeout_s(self, params: JobLogsInput) -> float | None:
        return READ_TIMEOUT_S + CONNECT_ALLOWANCE_S

    async def run(self, params: JobLogsInput, ctx: ToolContext) -> ToolResult:
        try:
            found = await job_log(
                self.pool,
                params.host,
                params.name,
                lines=params.lines,
                max_bytes=MAX_LOG_BYTES,
                grep=params.grep,
            )
        except (SSHError, JobCommandError) as exc:
            return ToolResult.error(str(exc))
        if found is None:
            return ToolResult.error(f"{params.host} has no job named {params.name}")
        size, raw = found
        shown = "\n".join(screen_lines(raw))  # a progress bar's last state, not every redraw
        text = bound_text(shown, spill_dir=ctx.spill_dir, label=f"job-{params.name}-log")
        header = f"== {params.host}/{params.name}: log of {size} bytes, last {params.lines} lines"
        header += f" matching {params.grep!r} ==" if params.grep else " =="
        return ToolResult(
            text=f"{header}\n{text.text or '(nothing)'}",
            data={"host": params.host, "name": params.name, "log_bytes": size},
            meta={"truncated": text.truncated},
        )
