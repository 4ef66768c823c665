"""`endpoint_check`: prove a served model through an SSH port forward to the head, and measure it.

Health, the model list, generations whose answers are checked, and the engine's own benchmark
(`vllm bench serve` in its container, a concurrency sweep with several runs each) at once; the
report is a table, a chart and JSON with a fingerprint, written beside the transcript. A passed
check is recorded in the world model with what it measured. The benchmark runs as a job on the
head (load, result files under the container's /tmp): a change, so the call is gated.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime

import httpx
from pydantic import BaseModel, Field, field_validator

from tools.base import Tool, ToolContext, ToolResult
from tools.deploy.bench_report import to_json
from tools.deploy.endpoint_http import EndpointClient, EndpointError
from tools.deploy.engine_bench import Sweep
from tools.deploy.proof import Proof, Where, prove
from tools.deploy.state import SessionState
from tools.plans.plan import PlanStep
from tools.risk.assessment import Risk, RiskAssessment
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool
from tools.world.measurements import Endpoint

ENDPOINT_TIMEOUT_S = 3600.0
DEFAULTS = Sweep()


def verified_endpoint(where: str, proof: Proof) -> Endpoint:
    """The world model's record of a passed check: the single stream and the widest sweep point."""
    rows = proof.report.rows
    single = next((r for r in rows if r.concurrency == 1), rows[0] if rows else None)
    widest = rows[-1] if rows else None
    ttft = single.ttft_ms.get("p50") if single else None
    return Endpoint(
        where=where,
        model=proof.model,
        single_stream_tok_s=round(single.tok_s_per_user, 2)
        if single and single.tok_s_per_user
        else None,
        ttft_s=round(ttft / 1000, 3) if ttft is not None else None,
        aggregate_tok_s=round(widest.tok_s_aggregate, 2) if widest else None,
        concurrency=widest.concurrency if widest else None,
        checked_at=datetime.now(UTC),
    )


class EndpointCheckInput(BaseModel):
    host: str = Field(description="The head serving it.")
    port: int = Field(default=8000, ge=1, le=65535)
    model: str | None = Field(default=None, description="Default: the first served.")
    concurrency: list[int] = Field(
        default=list(DEFAULTS.concurrency),
        min_length=1,
        max_length=8,
        description="The benchmark's concurrency sweep.",
    )
    runs: int = Field(default=DEFAULTS.runs, ge=1, le=10, description="Runs per concurrency.")
    input_len: int = Field(default=DEFAULTS.input_len, ge=1, le=131072)
    output_len: int = Field(default=DEFAULTS.output_len, ge=8, le=8192)
    ttft_target_ms: float = Field(
        default=DEFAULTS.ttft_ms, gt=0, description="Goodput: a good request's TTFT at most."
    )
    tpot_target_ms: float = Field(
        default=DEFAULTS.tpot_ms, gt=0, description="Goodput: a good request's TPOT at most."
    )
    generation_timeout_s: float = Field(
        default=120.0,
        gt=0,
        le=600,
        description="How long a checked generation may take before the engine counts as dead "
        "(the long-context check gets five times this).",
    )

    @field_validator("concurrency")
    @classmethod
    def _levels(cls, value: list[int]) -> list[int]:
        if any(c < 1 or c > 256 for c in value):
            raise ValueError("each concurrency is between 1 and 256")
        return sorted(set(value))

    def sweep(self) -> Sweep:
        return Sweep(
            concurrency=tuple(self.concurrency),
            runs=self.runs,
            input_len=self.input_len,
            output_len=self.output_len,
            ttft_ms=self.ttft_target_ms,
            tpot_ms=self.tpot_target_ms,
        )


def proof_command(params: EndpointCheckInput) -> str:
    """What an endpoint check runs, as one line a plan can name exactly: where, which model, and
    the benchmark's sweep (its load on the engine)."""
    sweep = params.sweep()
    return (
        f"endpoint_check {params.host}:{params.port} model={params.model or '(first served)'} "
        f"concurrency={','.join(map(str, sweep.concurrency))} runs={sweep.runs} "
        f"input_len={sweep.input_len} output_len={sweep.output_len}"
    )


def proof_step(host: str, port: int, model: str) -> PlanStep:
    """A deployment plan's proof: endpoint_check of its endpoint with the default sweep, named
    exactly as the tool declares it, so a plan approved with its steps covers that one call."""
    call = EndpointCheckInput(host=host, port=port, model=model)
    return PlanStep(
        title=f"prove {host}:{port}: health, checked generations, the engine's own benchmark",
        hosts=[host],
        actions=[proof_command(call)],
        expected_downtime="none (benchmark load on the engine while it runs)",
        rollback="none: it changes nothing but files in the engine container's /tmp",
        success_check="endpoint_check reports the model healthy, its answers checked",
    )


class EndpointCheckTool(Tool[EndpointCheckInput]):
    name = "endpoint_check"
    description = (
        "Prove a served model through an SSH port forward: /health, /v1/models, generations "
        "whose answers are checked (a question, a tool call where the engine has a tool "
        "parser, a fact found in a prompt near --max-model-len), and at the same time the "
        "engine's own benchmark (`vllm bench serve` in its container, a concurrency sweep, "
        "several runs each; Scout's own streams, labelled, where the image has none). Reports "
        "TTFT/TPOT/ITL percentiles, tokens/s per user and in aggregate, goodput, the "
        "single-stream ceiling, and writes a chart and JSON with a fingerprint."
    )
    Input = EndpointCheckInput

    def __init__(self, state: SessionState, pool: SSHPool) -> None:
        """`state` is the session's: the deployment step serving the port, for the fingerprint;
        `pool` its SSH connections (the tool is only made with an inventory)."""
        self.state = state
        self.pool = pool

    def risk(self, params: EndpointCheckInput) -> RiskAssessment:
        return RiskAssessment(
            Risk.MUTATING,
            "runs the engine's benchmark as a job on the head (load on the engine; result "
            "files in its container's /tmp)",
        )

    def hosts(self, params: EndpointCheckInput) -> list[str]:
        return [params.host]

    def commands(self, params: EndpointCheckInput) -> list[tuple[str, str]] | None:
        return [(params.host, proof_command(params))]

    def timeout_s(self, params: EndpointCheckInput) -> float:
        return ENDPOINT_TIMEOUT_S

    def summary(self, params: EndpointCheckInput) -> str:
        model = params.model or "the model it serves"
        sweep = ", ".join(str(n) for n in params.concurrency)
        return f"{params.host}:{params.port} {model}, benchmark at {sweep} streams"

    async def run(self, params: EndpointCheckInput, ctx: ToolContext) -> ToolResult:
        try:
            conn = await self.pool.connection(params.host)
            listener = await conn.forward_local_port("127.0.0.1", 0, "localhost", params.port)
        except (SSHError, OSError) as exc:
            return ToolResult.error(
                f"cannot open a port forward to {params.host}:{params.port}: {exc}"
            )
        where = f"{params.host}:{params.port}"
        place = Where(
            self.pool, params.host, params.port, self.state, ctx.world, ctx.spill_dir.parent
        )
        try:
            async with httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{listener.get_port()}",
                # a long-context check may think for minutes before its first byte
                timeout=httpx.Timeout(max(300.0, 6 * params.generation_timeout_s), connect=10.0),
                trust_env=False,
            ) as http:
                ctx.report(f"checking {where}")
                proof = await prove(
                    EndpointClient(http, where),
                    place,
                    model=params.model,
                    sweep=params.sweep(),
                    generation_timeout_s=params.generation_timeout_s,
                    bench_timeout_s=ENDPOINT_TIMEOUT_S - 300,
                    report=ctx.report,
                )
        except EndpointError as exc:
            return ToolResult.error(str(exc), host=params.host)
        finally:
            listener.close()
        if ctx.world is not None:
            ctx.world.record_endpoint(verified_endpoint(where, proof))
        return ToolResult(
            text=proof.render(),
            data={"endpoint": where, "models": proof.models, **_data(proof)},
            meta={"host": params.host, "headline": proof.headline(), "report": proof.render()},
        )


def _data(proof: Proof) -> dict:
    files = {"chart": str(proof.files[0]), "json": str(proof.files[1])} if proof.files else {}
    return {"model": proof.model, "generation": asdict(proof.generation),
            "report": to_json(proof.report), "files": files}  # fmt: skip
