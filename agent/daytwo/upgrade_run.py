"""Run an upgrade plan (agent/daytwo/upgrade_plan.py): approved once, then forward or back.

Every change is a tool call through the session's gate, as a model's would be: the plan is
proposed by its hash (`propose_plan`), each command runs as `ssh_exec`, each job as `job_start`,
the proof as `endpoint_check`; approved with its steps, each is taken from the plan's grant and
no one is asked again. The reads between them (a job's log until it is ready, a step's check, the
soak's generation) change nothing and run straight over the session's connections, as the
rollout tool's checks do.

The first thing that fails decides: during the fetch the old engine still serves, so the upgrade
stops there and the old one is read again; after the old engine went, the grant turns to the
rollback the plan named (tools/plans/approval.py) and it runs at once: what the upgrade started
is removed, the recorded engine starts as it was, its proof runs again.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from agent.daytwo.status import deployment_status
from agent.daytwo.upgrade_plan import ENGINE_KINDS, Upgrade
from agent.loop.calls import ToolCall
from agent.runtime.builder import Runtime
from agent.runtime.deployment_record import DeploymentRecord, record_id
from tools.base import ToolResult
from tools.deploy.launch.parts import FAILED_LINE
from tools.deploy.proof.call import EndpointCheckInput
from tools.deploy.steps import DeployStep
from tools.endpoint_check import EndpointCheckTool
from tools.job_start import JobStart
from tools.jobs.waiting import wait_for_jobs
from tools.plans.plan import PlanStep
from tools.propose_plan import ProposePlanTool
from tools.recon_tool import ReconTool
from tools.ssh.errors import SSHError
from tools.ssh_exec import SSHExec

Outcome = Literal["upgraded", "not upgraded", "rolled back", "rollback failed", "not approved"]
CHECK_TRIES, CHECK_PAUSE_S = 3, 2.0


@dataclass
class UpgradeRun:
    """How it ended; `record`: the deployment's record now (the new one once upgraded)."""

    outcome: Outcome
    detail: str = ""
    record: DeploymentRecord | None = None
    results: list[tuple[ToolCall, ToolResult]] = field(default_factory=list)


async def run_upgrade(
    runtime: Runtime,
    upgrade: Upgrade,
    *,
    wait_s: float,
    soak_s: float,
    report: Callable[[str], None] = lambda line: None,
) -> UpgradeRun:
    """Propose the upgrade, run it forward, and roll back on the first failure after the swap."""
    run = UpgradeRun("upgraded")
    digest = runtime.state.offer(upgrade.plan)
    if not await _call(runtime, run, ProposePlanTool.name, {"plan_hash": digest}):
        why = _first_line(run.results[-1][1])
        return UpgradeRun("not approved", why, upgrade.record, run.results)
    proof: DeploymentRecord | str | None = None
    for number, step in enumerate(upgrade.forward, 1):
        report(f"step {number}/{len(upgrade.forward)}: {step.title}")
        if isinstance(step, PlanStep):  # blue/green: the new engine proven beside the old
            proof = await _prove(runtime, run, upgrade, upgrade.engine, new=True)
            problem = proof if isinstance(proof, str) else None
        else:
            problem = await _run_step(runtime, run, step, wait_s)
        if problem is None:
            continue
        failed = f"step {number} ({step.title}): {problem}"
        if step in upgrade.fetch:
            return await _left_as_it_was(runtime, run, upgrade, failed)
        return await _roll_back(runtime, run, upgrade, failed, wait_s, report)
    if upgrade.plan.proof is not None:
        proof = await _prove(runtime, run, upgrade, upgrade.engine, new=True)
    if not isinstance(proof, DeploymentRecord):
        return await _roll_back(runtime, run, upgrade, str(proof), wait_s, report)
    report(f"proven; soaking {soak_s:g} s")
    await asyncio.sleep(soak_s)
    after = await deployment_status(proof, _pool(runtime))
    if after.state != "serving":
        why = f"the soak: after {soak_s:g} s it is {after.state} ({'; '.join(after.reasons)})"
        return await _roll_back(runtime, run, upgrade, why, wait_s, report)
    run.record = proof
    run.detail = f"{upgrade.request.describe()} proven at {proof.endpoint} and soaked {soak_s:g} s"
    return run


async def _left_as_it_was(
    runtime: Runtime, run: UpgradeRun, upgrade: Upgrade, failed: str
) -> UpgradeRun:
    """A fetch failed while the old engine served: nothing was swapped; read it again."""
    _grant_ends(runtime, failed, roll_back=False)
    status = await deployment_status(upgrade.record, _pool(runtime))
    said = f"{failed}; nothing was swapped: {upgrade.record.id} is {status.state}"
    return UpgradeRun("not upgraded", said, upgrade.record, run.results)


async def _roll_back(
    runtime: Runtime,
    run: UpgradeRun,
    upgrade: Upgrade,
    failed: str,
    wait_s: float,
    report: Callable[[str], None],
) -> UpgradeRun:
    """The plan's rollback, on its grant: clear what the upgrade started, start the recorded
    engine, prove it again."""
    report(f"rolling back: {failed}")
    _grant_ends(runtime, failed, roll_back=True)
    pool = _pool(runtime)
    # blue/green before the move: the recorded engine still serves, so nothing is restored
    beside = upgrade.port != upgrade.record.port  # in place, the old engine's names are reused
    untouched = beside and (await deployment_status(upgrade.record, pool)).state == "serving"
    for number, step in enumerate(upgrade.back, 1):
        if (untouched and step in upgrade.restore) or (
            step.kind == "stop" and not await _present(pool, step)
        ):
            _skip(runtime, upgrade, number)  # nothing there to remove, or to start again
            continue
        problem = await _run_step(runtime, run, step, wait_s)
        if problem is not None:
            said = f"{failed}; rollback step R{number} ({step.title}) failed too: {problem}"
            return UpgradeRun("rollback failed", said, upgrade.record, run.results)
    engine = [s for s in upgrade.restore if s.kind in ENGINE_KINDS]
    proof = await _prove(runtime, run, upgrade, engine, new=False)
    if isinstance(proof, str):
        said = f"{failed}; the recorded engine is back but its proof failed: {proof}"
        return UpgradeRun("rollback failed", said, upgrade.record, run.results)
    said = f"{failed}; rolled back to {upgrade.record.id}, proven again"
    return UpgradeRun("rolled back", said, upgrade.record, run.results)


async def _run_step(
    runtime: Runtime, run: UpgradeRun, step: DeployStep, wait_s: float
) -> str | None:
    """Run one step through the gate, then read it done; what went wrong, or None."""
    if step.job:
        params = {"name": step.job, "command": step.actions[0], "hosts": [step.host]}
        if not await _call(runtime, run, JobStart.name, params):
            return _first_line(run.results[-1][1])
        if step.wait:
            problem = await _wait(runtime, step, wait_s)
            if problem is not None:
                return problem
    else:
        for action in step.actions:
            if not await _call(runtime, run, SSHExec.name, {"host": step.host, "command": action}):
                return _first_line(run.results[-1][1])
    return await _check(runtime, step)


async def _wait(runtime: Runtime, step: DeployStep, wait_s: float) -> str | None:
    name = step.job or ""
    outcome = await wait_for_jobs(
        _pool(runtime), {step.host: [name]}, pattern=step.ready, first=True,
        timeout_s=wait_s, report=lambda line: None,
    )  # fmt: skip
    record = outcome.records.get((step.host, name))
    if record is None:
        return f"job {name} on {step.host}: {outcome.unreachable.get(step.host, 'no status')}"
    if outcome.reason == "timeout":
        return f"job {name} on {step.host} was not ready after {wait_s:g} s (stalled)"
    said = record.tail.strip().splitlines()
    if record.failed or (record.match and re.search(FAILED_LINE, record.match)):
        return f"job {name} failed on {step.host}: {said[-1] if said else record.state}"
    return None


async def _check(runtime: Runtime, step: DeployStep) -> str | None:
    """The step's success check (read-only), tried a few times: a service takes a moment."""
    check, output = step.check, ""
    for attempt in range(CHECK_TRIES):
        try:
            result = await _pool(runtime).run(check.host, check.command, timeout=60)
        except (SSHError, OSError) as exc:
            output = str(exc)
        else:
            output = (result.stdout + result.stderr).strip()
            if check.passes(result.exit_status, result.stdout + result.stderr):
                return None
        if attempt + 1 < CHECK_TRIES:
            await asyncio.sleep(CHECK_PAUSE_S)
    lines = output.splitlines()
    return f"its check failed: {check.description} ({lines[-1] if lines else 'no output'})"


async def _prove(
    runtime: Runtime, run: UpgradeRun, upgrade: Upgrade, engine: list[DeployStep], *, new: bool
) -> DeploymentRecord | str:
    """The proof of the new endpoint (`new`) or the recorded one, on the grant: the deployment's
    record as proven now, or why it failed. The hosts are read first (recon) and the running
    engine's steps handed to the session state, so the fingerprint names what runs now."""
    record = upgrade.record
    port = upgrade.port if new else record.port
    runtime.state.serving(engine)
    await _call(runtime, run, ReconTool.name, {"hosts": record.hosts()})
    # no proof soak: the upgrade watches the new engine itself after its proof (`--soak`)
    params = EndpointCheckInput(host=record.host, port=port, model=record.model, soak_s=0.0)
    if not await _call(runtime, run, EndpointCheckTool.name, params.model_dump()):
        return f"the proof: {_first_line(run.results[-1][1])}"
    if not new:
        return record
    data = run.results[-1][1].data or {}
    fingerprint = (data.get("report") or {}).get("fingerprint") or record.fingerprint
    return record.model_copy(
        update={
            "id": record_id(record.model, record.host, port),
            "port": port,
            "started": upgrade.started,
            "recorded_at": datetime.now(UTC),
            "transcript": str(runtime.transcript_path),
            "plan_hash": upgrade.plan.digest(),
            "fingerprint": fingerprint,
            "proof": run.results[-1][1].text.split("\n", 1)[0],
            "steps": [s.model_dump(mode="json") for s in upgrade.new_steps],
        }
    )


async def _present(pool: Any, step: DeployStep) -> bool:
    """Whether the container a rollback removal names is on its host (read-only)."""
    try:
        result = await pool.run(step.host, step.check.command, timeout=60)
    except (SSHError, OSError):
        return True  # unknown: try the removal, its result will say
    return not step.check.passes(result.exit_status, result.stdout)


def _grant_ends(runtime: Runtime, why: str, *, roll_back: bool) -> None:
    """A failure the gate did not see (a check, a stall, the proof's answers) ends the forward
    grant as a failed call would: to the plan's rollback, or (before the swap) to nothing."""
    grant = runtime.state.plan.grant
    if grant is not None and grant.rolling_back is None and grant.withdrawn is None:
        grant.withdraw(why, roll_back=roll_back)  # a failed call may have done it already


def _skip(runtime: Runtime, upgrade: Upgrade, number: int) -> None:
    """A rollback removal with nothing to remove passes without a call (it grants nothing)."""
    grant = runtime.state.plan.grant
    if grant is not None:
        base = len(upgrade.plan.steps) + (1 if upgrade.plan.proof is not None else 0)
        grant.mark_passed([base + number])


async def _call(runtime: Runtime, run: UpgradeRun, tool: str, params: dict[str, Any]) -> bool:
    call = ToolCall(f"op-{uuid.uuid4().hex[:10]}", tool, params)
    [result] = await runtime.session.run_operator_calls([call])
    run.results.append((call, result))
    return not result.is_error


def _pool(runtime: Runtime) -> Any:
    assert runtime.pool is not None, "an upgrade needs the inventory's hosts"
    return runtime.pool


def _first_line(result: ToolResult) -> str:
    text = result.text.strip()
    return text.splitlines()[0][:300] if text else "no reason given"
