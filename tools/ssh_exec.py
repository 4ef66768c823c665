"""`ssh_exec`: run one shell command on one host, or on several at once, over the pooled SSH.

Each host gets its own section in the text the model reads, with its exit status and duration;
long output is cut to head and tail with the full text spilled to a file named in the section.
"""

from __future__ import annotations

import asyncio
import re
import time

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tools.base import RiskAssessment, Tool, ToolContext, ToolResult
from tools.output import DEFAULT_LIMIT, bound_text
from tools.shell_judge import ShellJudge
from tools.ssh.errors import (
    AuthError,
    HostKeyError,
    HostUnreachableError,
    SSHError,
    UnknownHostError,
)
from tools.ssh.remote_command import LOCAL_GRACE_S, CommandResult

MAX_TIMEOUT_S = 3600
CONNECT_ALLOWANCE_S = 30.0
MIN_SECTION_LIMIT = 1_500


class SSHExecInput(BaseModel):
    """Run `command` with `sh` on `host`, or on every host in `hosts` at once."""

    model_config = ConfigDict(extra="forbid")

    host: str | None = Field(None, description="Inventory name of one host.")
    hosts: list[str] | None = Field(
        None, min_length=1, description="Inventory names to run on in parallel (instead of host)."
    )
    command: str = Field(min_length=1, description="Shell command, run with `sh -c`.")
    timeout: float = Field(
        120, gt=0, le=MAX_TIMEOUT_S, description="Seconds; the command is killed on the host."
    )
    cwd: str | None = Field(None, description="Working folder on the host.")
    env: dict[str, str] | None = Field(None, description="Extra environment variables.")

    @model_validator(mode="after")
    def _one_target(self) -> SSHExecInput:
        if (self.host is None) == (self.hosts is None):
            raise ValueError("give exactly one of `host` (one name) or `hosts` (a list of names)")
        return self

    @field_validator("env")
    @classmethod
    def _env_names(cls, env: dict[str, str] | None) -> dict[str, str] | None:
        for name in env or {}:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise ValueError(f"{name!r} is not a valid environment variable name")
        return env

    def targets(self) -> list[str]:
        return [self.host] if self.host is not None else list(dict.fromkeys(self.hosts or []))


class SSHExec(Tool[SSHExecInput]):
    name = "ssh_exec"
    description = (
        "Run a shell command over SSH on one inventory host (`host`) or on several in parallel "
        "(`hosts`). Returns one section per host with exit status, duration, stdout and stderr. "
        "The command is killed on the host after `timeout` seconds (default 120). Long output is "
        "cut to its head and tail; the full text is saved to a file named in the result."
    )
    Input = SSHExecInput

    def __init__(self, judge: ShellJudge) -> None:
        self.judge = judge

    def risk(self, params: SSHExecInput) -> RiskAssessment:
        """The command's own risk: running it adds nothing, its env and folder can."""
        return self.judge(params.command, env=params.env, cwd=params.cwd)

    def hosts(self, params: SSHExecInput) -> list[str]:
        return params.targets()

    def timeout_s(self, params: SSHExecInput) -> float | None:
        return params.timeout + LOCAL_GRACE_S + CONNECT_ALLOWANCE_S

    def summary(self, params: SSHExecInput) -> str:
        return " ".join(params.command.split())[:200]  # the faces show the hosts beside it

    async def run(self, params: SSHExecInput, ctx: ToolContext) -> ToolResult:
        if ctx.ssh is None:
            return ToolResult.error(
                "ssh_exec is unavailable: no SSH inventory is loaded. Start Scout with an "
                "inventory file (hosts, addresses, user, key) to reach hosts."
            )
        pool = ctx.ssh
        targets = params.targets()
        started = time.monotonic()

        async def one(host: str) -> CommandResult | SSHError:
            try:
                return await pool.run(
                    host, params.command, timeout=params.timeout, cwd=params.cwd, env=params.env
                )
            except SSHError as exc:
                return exc

        outcomes = await asyncio.gather(*(one(host) for host in targets))
        limit = max(MIN_SECTION_LIMIT, DEFAULT_LIMIT // len(targets))
        sections: list[str] = []
        per_host: dict[str, dict[str, object]] = {}
        truncated = False
        for host, outcome in zip(targets, outcomes, strict=True):
            if isinstance(outcome, SSHError):
                sections.append(f"== {host} ({_failure_kind(outcome)}) ==\n{outcome}")
                per_host[host] = {"error": str(outcome), "kind": _failure_kind(outcome)}
                continue
            section, facts = _section(outcome, params.timeout, limit, ctx)
            sections.append(section)
            per_host[host] = facts
            truncated = truncated or bool(facts["truncated"])
        failed = any(not isinstance(o, CommandResult) or not o.ok for o in outcomes)
        meta: dict[str, object] = {
            "hosts": targets,
            "duration_s": round(time.monotonic() - started, 3),
            "truncated": truncated,
        }
        if params.host is not None:
            single = outcomes[0]
            meta["exit_status"] = single.exit_status if isinstance(single, CommandResult) else None
        return ToolResult(
            text="\n\n".join(sections), is_error=failed, data={"hosts": per_host}, meta=meta
        )


def _failure_kind(error: SSHError) -> str:
    if isinstance(error, UnknownHostError):
        return "unknown host"
    if isinstance(error, HostKeyError):
        return "host key refused"
    if isinstance(error, AuthError):
        return "login refused"
    if isinstance(error, HostUnreachableError):
        return "unreachable"
    return "ssh error"


def _section(
    result: CommandResult, timeout: float, limit: int, ctx: ToolContext
) -> tuple[str, dict[str, object]]:
    """One host's part of the text, and its facts for `data`."""
    stdout = bound_text(
        result.stdout,
        limit=limit,
        spill_dir=ctx.spill_dir,
        label=f"ssh_exec-{result.host}-stdout",
        redact=ctx.redact,
    )
    stderr = bound_text(
        result.stderr,
        limit=max(MIN_SECTION_LIMIT // 2, limit // 2),
        spill_dir=ctx.spill_dir,
        label=f"ssh_exec-{result.host}-stderr",
        redact=ctx.redact,
    )
    status = f"timed out after {timeout:g} s" if result.timed_out else f"exit {result.exit_status}"
    lines = [f"== {result.host} ({status}, {result.duration_s:.2f} s) =="]
    if result.timed_out:
        lines.append(
            f"timed out after {timeout:g} s; the command was killed on the host. "
            "Partial output follows."
        )
    lines.append(stdout.text.rstrip("\n") if stdout.text else "(no output)")
    if stderr.text:
        lines += ["-- stderr --", stderr.text.rstrip("\n")]
    if result.truncated:
        lines.append(
            f"[the host sent more than Scout keeps: {result.stdout_omitted_bytes} stdout and "
            f"{result.stderr_omitted_bytes} stderr bytes were dropped from the middle]"
        )
    facts: dict[str, object] = {
        "exit_status": result.exit_status,
        "timed_out": result.timed_out,
        "duration_s": round(result.duration_s, 3),
        "stdout_chars": stdout.total_chars,
        "stderr_chars": stderr.total_chars,
        "truncated": stdout.truncated or stderr.truncated or result.truncated,
        "spill": {
            name: str(bounded.spill_path)
            for name, bounded in (("stdout", stdout), ("stderr", stderr))
            if bounded.spill_path is not None
        },
    }
    return "\n".join(lines), facts
