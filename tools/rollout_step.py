"""`rollout_step`: run the approved deployment plan step by step, each proven before what needs it.

The plan must be one that `plan_deployment` computed and a person approved (its hash matches,
and its steps are the computed ones). Approved with its steps, a call that runs exactly a step
(`commands`: its actions on its host) in an order the needs allow asks nothing more
(tools/plans/approval.py); otherwise each step asks. Each call runs one step whose needed steps
have passed (steps that need nothing of each other, such as a pull and a download, may be called
in one batch and run at once): its actions on its host (they pass the gate like any command: the
ShellJudge judges every one), then its success check; a failed check stops the rollout and
names the step's rollback, which the model proposes through the gate. A step marked as a job
(pulls, downloads, copies, the fabric test, the engine) starts as a named job and is waited on
(tools/deploy/rollout/step_jobs.py) before its check. Where the rollout stands lives in the session
state, which records each step.
"""

from __future__ import annotations

import asyncio
import contextlib

from pydantic import BaseModel, Field

from tools.base import Reason, Tool, ToolContext, ToolResult
from tools.deploy.proof.fingerprint import node_containers
from tools.deploy.proof.node_identity import disagreements, read_identities
from tools.deploy.proof.readiness import TOKEN_TIMEOUT_S, Readiness, origin, serving, time_readiness
from tools.deploy.rollout.order import run_step
from tools.deploy.rollout.state import SessionState
from tools.deploy.rollout.step_jobs import run_step_job
from tools.deploy.steps import DeployStep
from tools.recon.probe import probe_hosts
from tools.risk.assessment import Risk, RiskAssessment
from tools.risk.shell_judge import ShellJudge
from tools.ssh.pool import SSHPool


class RolloutStepInput(BaseModel):
    step: int = Field(
        ge=1, description="A plan step (1-based): the next, or any whose needed steps passed."
    )
    check_attempts: int = Field(
        default=1, ge=1, le=240, description="Tries of the check (services take time to load)."
    )
    check_interval_s: float = Field(default=5.0, ge=0.2, le=60)
    wait_s: float = Field(
        default=3600,
        gt=0,
        le=6 * 3600,
        description="A job step: how long to wait for it to end or be ready (it keeps "
        "running after).",
    )


class RolloutStepTool(Tool[RolloutStepInput]):
    name = "rollout_step"
    description = (
        "Run a step of the approved plan (from plan_deployment): its actions, then its success "
        "check. A step runs once the steps it needs have passed, so independent ones (pulls, a "
        "download) may go in one batch; a failed step stops the rollout and names its rollback."
    )
    Input = RolloutStepInput

    def __init__(self, state: SessionState, pool: SSHPool, judge: ShellJudge) -> None:
        """`state` is the session's (its risk, hosts and summary are judged before any run);
        `pool` its SSH connections (the tool is only made with an inventory)."""
        self.state = state
        self.pool = pool
        self.judge = judge

    def _step(self, params: RolloutStepInput) -> DeployStep | None:
        rollout = self.state.approved_rollout()
        if rollout is None or params.step > len(rollout.steps):
            return None
        return rollout.steps[params.step - 1]

    def risk(self, params: RolloutStepInput) -> RiskAssessment:
        """The worst of the step's commands; with no step known, assume it changes things."""
        commands = self.commands(params)
        if commands is None:
            return RiskAssessment(Risk.MUTATING, f"{self.name} is {Risk.MUTATING.label}")
        worst = RiskAssessment(Risk.READ_ONLY, f"{self.name} itself is {Risk.READ_ONLY.label}")
        for _, action in commands:
            judged = self.judge(action)
            if judged.risk >= worst.risk:
                worst = judged
        return worst

    def hosts(self, params: RolloutStepInput) -> list[str]:
        step = self._step(params)
        return [step.host] if step else []

    def commands(self, params: RolloutStepInput) -> list[tuple[str, str]] | None:
        """The step's actions on its host, as the approved plan wrote them (its check reads)."""
        step = self._step(params)
        return [(step.host, action) for action in step.actions] if step else None

    def summary(self, params: RolloutStepInput) -> str:
        step = self._step(params)
        if step is None:
            return f"step {params.step}"
        return f"step {params.step}: {step.title} — $ " + " ; ".join(step.actions)

    def timeout_s(self, params: RolloutStepInput) -> float:
        check = params.check_attempts * (params.check_interval_s + 60.0)
        return 600.0 + params.wait_s + check

    async def run(self, params: RolloutStepInput, ctx: ToolContext) -> ToolResult:
        rollout = self.state.approved_rollout()
        if rollout is None:
            return ToolResult.error(
                "No approved deployment plan to roll out: compute one with plan_deployment, then "
                "get it approved with propose_plan (its plan_hash: the approved plan must be that "
                "one, unchanged).",
                Reason(kind="no_approved_rollout"),
            )
        total = len(rollout.steps)
        if rollout.state == "failed":
            return ToolResult.error("The rollout stopped at a failed step. " + rollout.summary())
        if rollout.state == "done":
            return ToolResult(text=f"The rollout is complete ({total}/{total} steps).")
        if params.step > total:
            return ToolResult.error(
                f"The approved plan has {total} steps; there is no step {params.step}."
            )
        step = rollout.steps[params.step - 1]
        refusal = rollout.why_not(step)
        if refusal is not None:
            return ToolResult.error(
                f"Step {params.step} cannot run now: {refusal}",
                Reason(kind="step_not_ready", fields={"step": params.step}),
            )

        async def run_command(host: str, command: str) -> tuple[int | None, str]:
            ctx.report(f"{host}: {command[:80]}")
            result = await self.pool.run(host, command, timeout=600)
            return result.exit_status, (result.stdout + result.stderr)[-2000:]

        timed: list[Readiness] = []

        async def run_job(job_step: DeployStep) -> tuple[int | None, str]:
            serve = serving(job_step)
            warning = await _nodes_disagree(self.pool, rollout.steps) if serve else ""
            readiness = origin(serve) if serve else None
            timing = None
            if serve and readiness:
                timing = asyncio.create_task(
                    time_readiness(self.pool, job_step.host, serve, readiness)
                )
            try:
                code, said = await run_step_job(
                    self.pool,
                    job_step,
                    wait_s=params.wait_s,
                    report=ctx.report,
                    world=ctx.world,
                )
            except BaseException:
                if timing:
                    timing.cancel()
                raise
            if timing and serve and readiness:
                await _settle(timing, ready=code == 0)
                timed.append(readiness)
                self.state.readiness[f"{job_step.host}:{serve.port}"] = readiness.data()
                ctx.report(readiness.line())
            return code, said + warning

        try:
            outcome = await run_step(
                rollout,
                run_command,
                step=step,
                check_attempts=params.check_attempts,
                check_interval_s=params.check_interval_s,
                run_job=run_job,
            )
        finally:
            self.state.rollout_moved()
        if outcome.ok and step.creates and ctx.world is not None:
            ctx.world.record_created(step.host, step.creates, f"plan step {params.step}")
        data = {"step": params.step, "of": total, "ok": outcome.ok, "state": rollout.state}
        if timed:  # in the transcript, not in the text the model reads
            data["readiness"] = timed[-1].data()
        if not outcome.ok:
            return ToolResult(
                text=f"Step {params.step}/{total} failed.\n{rollout.summary()}\n"
                f"Last output:\n{outcome.output.strip()[-1500:]}",
                is_error=True,
                data={**data, "rollback": step.rollback, "host": step.host},
            )
        following = rollout.current
        after = f" Next: step {rollout.number(following)} ({following.title})." if following else ""
        said = f"\n{outcome.output.strip()[-800:]}" if step.job else ""
        complete = ""
        if rollout.state == "done":
            complete = " The rollout is complete." + await _probe_again(
                rollout.steps, self.pool, ctx
            )
        return ToolResult(
            text=f"Step {params.step}/{total} done: {step.title}; {step.check.description}."
            + after
            + said
            + complete,
            data=data,
        )


async def _nodes_disagree(pool: SSHPool, steps: list[DeployStep]) -> str:
    """Before an engine starts: where the nodes' containers, already running, say they run
    different NCCL builds, drivers or firmware, the finding and its fix (node_identity.py); the
    engine still starts, and the proof's soak is what shows whether it holds."""
    containers = node_containers(steps)
    if len(containers) < 2:
        return ""
    found = disagreements(await read_identities(pool, containers, {}))
    return "".join(f"\nwarning: {finding.summary}" for finding in found)


async def _settle(timing: asyncio.Task[None], *, ready: bool) -> None:
    """End the timing once the step ended: when the engine came up, after its first token (or
    a bound); at once when it did not (what it reached stays in its Readiness)."""
    if ready:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(timing), TOKEN_TIMEOUT_S + 60)
    timing.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await timing


async def _probe_again(steps: list[DeployStep], pool: SSHPool, ctx: ToolContext) -> str:
    """Probe the plan's hosts once the rollout is complete: the facts recon gathered before it
    (a container holding memory, a link down, no weights) no longer hold, and the world model,
    its findings and a later plan should not read them as if they did. The model is placed:
    its fit is no longer a question (the engine now holds the memory the fit check counted)."""
    if ctx.world is None:
        return ""
    hosts = list(dict.fromkeys(step.host for step in steps))
    probe_round = await probe_hosts(pool, hosts)
    ctx.world.placed(probe_round.facts, probe_round.failures)
    failed = f" ({', '.join(probe_round.failures)} did not answer)" if probe_round.failures else ""
    return f" Probed {', '.join(hosts)} again for the world model{failed}."
