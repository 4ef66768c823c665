"""`deployment_status`: what `scout status` reads, for the model: each recorded deployment now.

The records and the reading of them are the agent's (agent/daytwo/status.py: the hosts in one
round, one short real generation); the session lends this tool that reader, as it lends
`recall_result` its ledger, so the tool reaches no record or host of its own. It only reads.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tools.base import Tool, ToolContext, ToolResult

# (each deployment's status as data: id, model, endpoint, state, reasons, answer; problems)
StatusReader = Callable[[str | None], Awaitable[tuple[list[dict[str, Any]], list[str]]]]
TROUBLE = ("drifted", "degraded", "stopped", "gone", "unknown")


class DeploymentStatusInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(
        default=None,
        description="One deployment: its record id, endpoint (host:port) or model. Default: all.",
    )


class DeploymentStatusTool(Tool[DeploymentStatusInput]):
    name = "deployment_status"
    description = (
        "The deployments Scout recorded once proven, as their hosts and endpoints show them now: "
        "serving, drifted (another image or model than proven), degraded (containers up, no "
        "generation), stopped, gone, or unknown (a host could not be read), each with reasons."
    )
    Input = DeploymentStatusInput

    def __init__(self, read: StatusReader) -> None:
        """`read(name)`: the agent's reading of the records (all of them for None)."""
        self.read = read

    def summary(self, params: DeploymentStatusInput) -> str:
        return params.name or "every recorded deployment"

    async def run(self, params: DeploymentStatusInput, ctx: ToolContext) -> ToolResult:
        statuses, problems = await self.read(params.name)
        lines = [f"warning: {problem}" for problem in problems]
        if not statuses and not problems:
            lines.append("No deployment is recorded yet: a proven rollout records one.")
        for status in statuses:
            lines.append(
                f"{status['id']}: {status['state']} — {status['model']} at {status['endpoint']}"
            )
            lines.extend(f"  {reason}" for reason in status["reasons"])
        failed = bool(problems) and not statuses
        troubled = [s["id"] for s in statuses if s["state"] in TROUBLE]
        return ToolResult(
            text="\n".join(lines),
            is_error=failed,
            data={"deployments": statuses, "troubled": troubled},
        )
