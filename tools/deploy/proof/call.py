"""The endpoint check as a call: its input, and the one line that names it exactly.

A deployment plan ends with its proof (`proof_step`); the plan names the endpoint_check call in
the same words the tool declares it runs (tools/endpoint_check.py, `Tool.commands`), so a plan
approved with its steps covers exactly that call and no other sweep.

The soak is the session's to default (`proof_soak_s`): 30 minutes on real hosts, where TP=2 has
been seen to hang only after 20-26 minutes of load (vLLM issue #41725), and none on the
simulator, whose clock is not the hardware's (a call there asks for one by soak_s). The plan and
the tool take the same default, so the plan names the soak the call will hold; the operator may
still ask soak_s=0.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

from tools.deploy.proof.engine_bench import Sweep
from tools.deploy.proof.soak import REAL_HOSTS_S, SoakSpec
from tools.plans.plan import PlanStep

DEFAULTS = Sweep()


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
    mode: Literal["quick", "full"] = Field(
        default="quick",
        description="quick: what ~2 minutes of the engine's time pay for, timed from "
        "warm-ups, up to 100 measured requests per level (p50/p90 at 100, the mean and its CI "
        "under; levels it cannot afford are named); full: 1,000 (p99 too; far longer). Both "
        "warm up first and use fresh prompts.",
    )
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

    soak_s: float | None = Field(
        default=None,
        ge=0,
        le=7200,
        description="After the sweep, hold the load this long and watch for a stall, a latency "
        f"rise, restarts and Xid/NCCL lines. Default: {REAL_HOSTS_S:g} on real hosts (TP=2 "
        "hangs reported after 20-26 min), none on the simulator; 0: no soak.",
    )
    soak_concurrency: int | None = Field(
        default=None, ge=1, le=256, description="The soak's streams; default: the widest level."
    )
    stall_s: float = Field(
        default=60.0, gt=0, le=1800, description="A soak stream this long without a token stalls."
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
            mode=self.mode,
            input_len=self.input_len,
            output_len=self.output_len,
            ttft_ms=self.ttft_target_ms,
            tpot_ms=self.tpot_target_ms,
        )

    def with_soak(self, default_s: float) -> EndpointCheckInput:
        """This call with the session's soak where it asked none."""
        return self if self.soak_s is not None else self.model_copy(update={"soak_s": default_s})

    def soak(self) -> SoakSpec | None:
        if not self.soak_s:
            return None
        streams = self.soak_concurrency or max(self.concurrency)
        return SoakSpec(
            self.soak_s, streams, self.stall_s, self.output_len, poll_s=min(5.0, self.stall_s / 4)
        )


def proof_command(params: EndpointCheckInput) -> str:
    """What an endpoint check runs, as one line a plan can name exactly: where, which model, and
    the benchmark's sweep (its load on the engine)."""
    sweep = params.sweep()
    return (
        f"endpoint_check {params.host}:{params.port} model={params.model or '(first served)'} "
        f"concurrency={','.join(map(str, sweep.concurrency))} mode={sweep.mode} runs={sweep.runs} "
        f"input_len={sweep.input_len} output_len={sweep.output_len}"
    ) + (f" soak={soak.seconds:g}s c={soak.concurrency}" if (soak := params.soak()) else "")


def proof_soak_s(simulated: bool) -> float:
    """The soak a session's proofs hold unless asked otherwise: none on the simulator."""
    return 0.0 if simulated else REAL_HOSTS_S


def proof_step(host: str, port: int, model: str, soak_s: float = 0.0) -> PlanStep:
    """A deployment plan's proof: endpoint_check of its endpoint with the default sweep and the
    session's soak, named exactly as the tool declares it, so a plan approved with its steps
    covers that one call."""
    call = EndpointCheckInput(host=host, port=port, model=model, soak_s=soak_s)
    return PlanStep(
        title=f"prove {host}:{port}: health, checked generations, the engine's own benchmark",
        hosts=[host],
        actions=[proof_command(call)],
        expected_downtime="none (benchmark load on the engine while it runs"
        + (f", then a soak of {soak_s / 60:g} min)" if soak_s else ")"),
        rollback="none: it changes nothing but files in the engine container's /tmp",
        success_check="endpoint_check reports the model healthy, its answers checked",
    )
