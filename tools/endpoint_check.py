"""`endpoint_check`: prove a served model through an SSH port forward to the head, and measure it.

Health, the model list, generations whose answers are checked, then, alone, the engine's own
benchmark (`vllm bench serve` in its container, a concurrency sweep with several runs each, by
the method engine_bench.py states); the report is a table, a chart and JSON with a fingerprint,
written beside the transcript. A passed check is recorded in the world model with what it
measured. The benchmark runs as a job on the head (load, result files under the container's
/tmp): a change, so the call is gated.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime

import httpx

from tools.base import Tool, ToolContext, ToolResult
from tools.deploy.proof.call import EndpointCheckInput, proof_command
from tools.deploy.proof.http import EndpointClient, EndpointError
from tools.deploy.proof.phases import Proof, Where, prove
from tools.deploy.proof.report import to_json
from tools.deploy.rollout.state import SessionState
from tools.risk.assessment import Risk, RiskAssessment
from tools.ssh.errors import SSHError
from tools.ssh.pool import SSHPool
from tools.world.measurements import Endpoint

ENDPOINT_TIMEOUT_S = 3600.0


def verified_endpoint(where: str, proof: Proof) -> Endpoint:
    """The world model's record of a passed check: the single stream and the widest sweep point."""
    rows = proof.report.rows
    single = next((r for r in rows if r.concurrency == 1), rows[0] if rows else None)
    widest = rows[-1] if rows else None
    ttft = (single.ttft_ms.get("p50") or single.ttft_mean_ms) if single else None
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


class EndpointCheckTool(Tool[EndpointCheckInput]):
    name = "endpoint_check"
    description = (
        "Prove a served model through an SSH port forward: /health, /v1/models, generations "
        "whose answers are checked (a question, a tool call where the engine has a tool "
        "parser, a fact found in a prompt near --max-model-len), then, never beside them, the "
        "engine's own benchmark (`vllm bench serve` in its container, a concurrency sweep, "
        "several runs each, fresh prompts, warm-ups discarded; Scout's own streams, labelled, "
        "where the image has none). mode=quick (default) fits ~2 minutes of the engine's time, "
        "up to 100 requests per level (the mean ± CI where under 100, p50/p90 at 100; levels "
        "it cannot afford named), mode=full 1,000 (p99 too, far longer). After it, a soak "
        "(soak_s; 30 min by default on real hosts). Reports TTFT/TPOT/ITL percentiles of the "
        "pooled requests, tokens/s per user and in aggregate with the run-to-run spread, "
        "goodput, the single-stream ceiling, and writes a chart and JSON with a fingerprint."
    )
    Input = EndpointCheckInput

    def __init__(self, state: SessionState, pool: SSHPool, soak_s: float = 0.0) -> None:
        """`state` is the session's: the deployment step serving the port, for the fingerprint;
        `pool` its SSH connections (the tool is only made with an inventory); `soak_s` the soak
        a call that names none holds (call.proof_soak_s: 30 minutes on real hosts)."""
        self.state = state
        self.pool = pool
        self.soak_s = soak_s

    def risk(self, params: EndpointCheckInput) -> RiskAssessment:
        return RiskAssessment(
            Risk.MUTATING,
            "runs the engine's benchmark as a job on the head (load on the engine; result "
            "files in its container's /tmp)",
        )

    def hosts(self, params: EndpointCheckInput) -> list[str]:
        return [params.host]

    def commands(self, params: EndpointCheckInput) -> list[tuple[str, str]] | None:
        return [(params.host, proof_command(params.with_soak(self.soak_s)))]

    def timeout_s(self, params: EndpointCheckInput) -> float:
        return ENDPOINT_TIMEOUT_S + (params.with_soak(self.soak_s).soak_s or 0.0)

    def summary(self, params: EndpointCheckInput) -> str:
        model = params.model or "the model it serves"
        sweep = ", ".join(str(n) for n in params.concurrency)
        return f"{params.host}:{params.port} {model}, benchmark at {sweep} streams"

    async def run(self, params: EndpointCheckInput, ctx: ToolContext) -> ToolResult:
        params = params.with_soak(self.soak_s)
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
                    soak=params.soak(),
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
