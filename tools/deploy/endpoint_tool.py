"""`endpoint_check`: prove a served model through an SSH port forward to the head, and measure it.

Health, the model list, one completion, then time to first token and tokens/s for one stream
and for several at once. A passed check is recorded in the world model with what it measured.
Read-only.
"""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
from pydantic import BaseModel, Field

from tools.base import Tool, ToolContext, ToolResult
from tools.deploy.endpoint import EndpointReport, check_endpoint
from tools.deploy.endpoint_http import EndpointClient, EndpointError
from tools.ssh.errors import SSHError
from tools.world_store import Endpoint

ENDPOINT_TIMEOUT_S = 900.0


def verified_endpoint(where: str, report: EndpointReport) -> Endpoint:
    """The world model's record of a passed check: where, which model, the measured rates."""
    return Endpoint(
        where=where,
        model=report.model,
        single_stream_tok_s=round(report.single.tok_s, 2),
        ttft_s=report.single.ttft_s,
        aggregate_tok_s=round(report.aggregate_tok_s, 2),
        concurrency=report.concurrency,
        checked_at=datetime.now(UTC),
    )


class EndpointCheckInput(BaseModel):
    host: str = Field(description="The head serving it.")
    port: int = Field(default=8000, ge=1, le=65535)
    model: str | None = Field(default=None, description="Default: the first served.")
    concurrency: int = Field(default=4, ge=1, le=64)
    max_tokens: int = Field(default=128, ge=8, le=4096)
    generation_timeout_s: float = Field(
        default=120.0,
        gt=0,
        le=600,
        description="How long a checked generation may take before the engine counts as dead "
        "(the long-context check gets five times this).",
    )


class EndpointCheckTool(Tool[EndpointCheckInput]):
    name = "endpoint_check"
    description = (
        "Prove a served model through an SSH port forward, read-only: /health, /v1/models, "
        "generations whose answers are checked (a question, a tool call where the engine has a "
        "tool parser, a fact found in a prompt near --max-model-len), then time to first "
        "token and tokens/s for one stream and for `concurrency` streams at once."
    )
    Input = EndpointCheckInput

    def hosts(self, params: EndpointCheckInput) -> list[str]:
        return [params.host]

    def timeout_s(self, params: EndpointCheckInput) -> float:
        return ENDPOINT_TIMEOUT_S

    async def run(self, params: EndpointCheckInput, ctx: ToolContext) -> ToolResult:
        if ctx.ssh is None:
            return ToolResult.error(
                "endpoint_check needs an inventory: start Scout with --inventory FILE."
            )
        try:
            conn = await ctx.ssh.connection(params.host)
            listener = await conn.forward_local_port("127.0.0.1", 0, "localhost", params.port)
        except (SSHError, OSError) as exc:
            return ToolResult.error(
                f"cannot open a port forward to {params.host}:{params.port}: {exc}"
            )
        where = f"{params.host}:{params.port}"
        try:
            async with httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{listener.get_port()}",
                timeout=httpx.Timeout(300.0, connect=10.0),
                trust_env=False,
            ) as http:
                ctx.report(f"checking {where}")
                report = await check_endpoint(
                    EndpointClient(http, where),
                    model=params.model,
                    concurrency=params.concurrency,
                    max_tokens=params.max_tokens,
                    generation_timeout_s=params.generation_timeout_s,
                )
        except EndpointError as exc:
            return ToolResult.error(str(exc), host=params.host)
        finally:
            listener.close()
        if ctx.world is not None:
            ctx.world.record_endpoint(verified_endpoint(where, report))
        return ToolResult(
            text=report.render(),
            data={"endpoint": where, **report.to_data()},
            meta={"host": params.host, "headline": report.render()},
        )
