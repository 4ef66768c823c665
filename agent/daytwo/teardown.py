"""`scout stop` and `scout teardown` as plans: made from the record, approved once, then run.

Stopping drains the engine (`docker stop --time=30` sends SIGTERM and lets the server finish what
it holds for up to 30 s) and keeps its container; teardown also removes the containers Scout
created. Asked to restore (`--restore`), teardown then undoes what the rollout changed on the
hosts, newest change first, each by the rollback its plan step named when it was approved (the
container Scout stopped is started again, a link it brought up goes down). Images and weights stay:
fetching them again costs hours, and they change nothing on a host until something runs them.
"""

from __future__ import annotations

from typing import Literal

from agent.runtime.deployment_record import DeploymentRecord
from tools.plans.plan import Plan, PlanStep

Action = Literal["stop", "teardown"]
DRAIN_S = 30


def takedown_plan(
    record: DeploymentRecord,
    action: Action,
    *,
    restore: bool = False,
    others: list[DeploymentRecord] | None = None,
) -> Plan:
    """The plan that stops (or removes) the deployment's engine on every host it runs on, the
    serving host first so the endpoint stops taking requests before its workers go; another
    recorded deployment (`others`) whose container it takes down is named in its risks."""
    started = sorted(record.started, key=lambda s: s.host != record.host)
    steps = [_engine_step(record, s.host, s.container, action) for s in started]
    risks = [f"{record.endpoint} stops serving {record.model} until it is deployed again"]
    risks += record.evictions(others or [])
    if restore and action == "teardown":
        for change in reversed(record.changes):
            if change.undo is None:
                risks.append(f"cannot undo on {change.host}: {change.did} (no rollback command)")
                continue
            steps.append(
                PlanStep(
                    title=f"put {change.undo_host} back as Scout found it: undo `{change.did}`",
                    hosts=[change.undo_host],
                    actions=[change.undo],
                    expected_downtime="none",
                    rollback=change.did,
                    success_check=f"on {change.undo_host}: the recon after the plan shows it",
                )
            )
    elif record.changes and action == "teardown":
        changed = "; ".join(f"{c.host}: {c.did}" for c in record.changes)
        risks.append(f"left as the rollout changed them (--restore undoes them): {changed}")
    if action == "teardown":
        risks.append("images and weights stay on the hosts")
    goal = f"{action} {record.model} at {record.endpoint} (deployment {record.id})"
    if restore and action == "teardown":
        goal += ", then restore what the rollout changed"
    return Plan(goal=goal, steps=steps, risks=risks)


def _engine_step(record: DeploymentRecord, host: str, container: str, action: Action) -> PlanStep:
    stop = f"docker stop --time={DRAIN_S} {container}"
    if action == "stop":
        return PlanStep(
            title=f"drain and stop {container} on {host}",
            hosts=[host],
            actions=[stop],
            expected_downtime=f"{record.endpoint} stops serving",
            rollback=f"docker start {container}",
            success_check=f"on {host}: {container} is no longer running",
        )
    return PlanStep(
        title=f"drain, stop and remove {container} on {host}",
        hosts=[host],
        actions=[stop, f"docker rm {container}"],
        expected_downtime=f"{record.endpoint} stops serving",
        rollback=f"none once removed: deploy again from {record.transcript}",
        success_check=f"on {host}: no container named {container}",
    )
