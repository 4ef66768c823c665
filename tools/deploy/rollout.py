"""Rollout: steps in the order their dependencies need, each proven before the next one starts.

A small state machine. The agent drives real steps through its gated tools; `drive` runs the
same machine with a command runner (tests, the simulator). A failed check stops the rollout and
offers that step's rollback as the next action, which goes through the gate like any other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from tools.deploy.steps import DeployStep

RolloutState = Literal["ready", "running", "done", "failed"]
# (host, command) -> (exit status, output)
CommandRunner = Callable[[str, str], Awaitable[tuple[int | None, str]]]
# a step whose action is a job -> (0 once it ended well or is ready, else its code; what it says)
JobRunner = Callable[[DeployStep], Awaitable[tuple[int | None, str]]]


class OrderError(ValueError):
    """Steps whose dependencies cannot be met (unknown step, or a cycle)."""


def order_steps(steps: list[DeployStep]) -> list[DeployStep]:
    """A stable topological order: as given, except a step never precedes what it needs."""
    by_id = {s.id: s for s in steps}
    if len(by_id) != len(steps):
        raise OrderError("two steps share an id")
    for step in steps:
        unknown = [n for n in step.needs if n not in by_id]
        if unknown:
            raise OrderError(f"step {step.id!r} needs unknown step(s): {', '.join(unknown)}")
    ordered: list[DeployStep] = []
    placed: set[str] = set()
    pending = list(steps)
    while pending:
        ready = next((s for s in pending if set(s.needs) <= placed), None)
        if ready is None:
            raise OrderError(
                "steps wait on each other in a cycle: " + ", ".join(s.id for s in pending)
            )
        ordered.append(ready)
        placed.add(ready.id)
        pending.remove(ready)
    return ordered


@dataclass
class StepOutcome:
    step_id: str
    ok: bool
    output: str


@dataclass
class Rollout:
    """Where a deployment stands: the next step, what passed, and what to do after a failure."""

    steps: list[DeployStep]
    position: int = 0
    state: RolloutState = "ready"
    outcomes: list[StepOutcome] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.steps = order_steps(self.steps)

    @property
    def current(self) -> DeployStep | None:
        if self.state in ("done", "failed") or self.position >= len(self.steps):
            return None
        return self.steps[self.position]

    def record(self, ok: bool, output: str = "") -> None:
        """The current step's success check passed (`ok`) or not; move on or stop."""
        step = self.current
        if step is None:
            raise RuntimeError(f"no step to record: the rollout is {self.state}")
        self.outcomes.append(StepOutcome(step.id, ok, output))
        if not ok:
            self.state = "failed"
            return
        self.position += 1
        self.state = "done" if self.position == len(self.steps) else "running"

    @property
    def failed_step(self) -> DeployStep | None:
        return self.steps[self.position] if self.state == "failed" else None

    def next_action(self) -> str | None:
        """What to propose next: the current step's first command, or a failed step's rollback."""
        failed = self.failed_step
        if failed is not None:
            return failed.rollback
        step = self.current
        return step.actions[0] if step else None

    def summary(self) -> str:
        done = sum(o.ok for o in self.outcomes)
        if self.state == "failed" and self.failed_step is not None:
            step = self.failed_step
            return (
                f"stopped at step {self.position + 1}/{len(self.steps)} ({step.title}): "
                f"{step.check.description} did not hold. Proposed rollback on {step.host}: "
                f"{step.rollback}"
            )
        return f"{done}/{len(self.steps)} steps done" + (
            " — rollout complete" if self.state == "done" else ""
        )


async def run_step(
    rollout: Rollout,
    run: CommandRunner,
    *,
    check_attempts: int = 1,
    check_interval_s: float = 1.0,
    run_job: JobRunner | None = None,
) -> StepOutcome:
    """Run the current step's actions (a job step through `run_job`, when given), then its
    check (retried); record and return the outcome.

    Actions are never repeated; only the read-only check is, to give a service time to come up.
    """
    step = rollout.current
    if step is None:
        raise RuntimeError(f"no step to run: the rollout is {rollout.state}")
    if step.by_hand:
        rollout.record(False, "needs a person: " + "; ".join(step.actions))
        return rollout.outcomes[-1]
    said = ""  # what a job step's job said (its bandwidth, its last lines)
    as_job = bool(step.job) and run_job is not None
    if as_job:
        status, said = await run_job(step)  # type: ignore[misc]
        if status != 0:
            rollout.record(False, said)
            return rollout.outcomes[-1]
    for action in [] if as_job else step.actions:
        status, output = await run(step.host, action)
        if status != 0:
            rollout.record(False, f"`{action}` exited {status}: {output}")
            return rollout.outcomes[-1]
    ok, output = False, ""
    for attempt in range(check_attempts):
        status, output = await run(step.check.host, step.check.command)
        ok = step.check.passes(status, output)
        if ok or attempt + 1 == check_attempts:
            break
        await asyncio.sleep(check_interval_s)
    rollout.record(ok, said if (said and ok) else output)
    return rollout.outcomes[-1]


async def drive(
    rollout: Rollout,
    run: CommandRunner,
    *,
    check_attempts: int = 1,
    check_interval_s: float = 1.0,
) -> Rollout:
    """Run step after step until the rollout is done or a step fails."""
    while rollout.current is not None:
        outcome = await run_step(
            rollout, run, check_attempts=check_attempts, check_interval_s=check_interval_s
        )
        if not outcome.ok:
            break
    return rollout
