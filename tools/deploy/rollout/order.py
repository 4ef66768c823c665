"""Rollout: steps in the order their dependencies need, each proven before a step needing it starts.

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
    """Where a deployment stands: which steps passed or run, what may run next, and what to do
    after a failure.

    A step may run once every step it needs has passed, so independent steps (the pulls and the
    download) can run at the same time; the first failure stops the rollout: no step starts
    after it, while steps already running finish and are recorded.
    """

    steps: list[DeployStep]
    state: RolloutState = "ready"
    outcomes: list[StepOutcome] = field(default_factory=list)
    running: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.steps = order_steps(self.steps)

    @property
    def passed(self) -> set[str]:
        return {o.step_id for o in self.outcomes if o.ok}

    @property
    def position(self) -> int:
        """How many steps have passed."""
        return len(self.passed)

    def number(self, step: DeployStep) -> int:
        """The step's 1-based number in the plan."""
        return [s.id for s in self.steps].index(step.id) + 1

    @property
    def current(self) -> DeployStep | None:
        """The first step in plan order that has neither passed nor started; None when the
        rollout is done or stopped."""
        if self.state in ("done", "failed"):
            return None
        passed = self.passed
        return next(
            (s for s in self.steps if s.id not in passed and s.id not in self.running), None
        )

    def waits_for(self, step: DeployStep) -> list[DeployStep]:
        """The steps `step` needs that have not passed yet (empty: it may run now)."""
        passed = self.passed
        return [s for s in self.steps if s.id in step.needs and s.id not in passed]

    def runnable(self) -> list[DeployStep]:
        """The steps that may start now: not passed, not running, every need passed."""
        if self.state in ("done", "failed"):
            return []
        passed = self.passed
        return [
            s
            for s in self.steps
            if s.id not in passed and s.id not in self.running and not self.waits_for(s)
        ]

    def why_not(self, step: DeployStep) -> str | None:
        """Why `step` may not start now (the rollout stopped, it passed, it runs, or a step it
        needs has not passed), or None: it may."""
        if self.state == "failed":
            return "the rollout stopped at a failed step. " + self.summary()
        ready = ", ".join(f"{self.number(s)} ({s.title})" for s in self.runnable())
        now = f" Steps that may run now: {ready}." if ready else ""
        if step.id in self.passed:
            return "it has passed already." + now
        if step.id in self.running:
            return "it is running already (its result comes with the call that started it)."
        waiting = self.waits_for(step)
        if not waiting:
            return None
        names = ", ".join(
            f"{self.number(s)} ({s.title}{', running' if s.id in self.running else ''})"
            for s in waiting
        )
        return (
            f"it needs step {names} to pass first; steps that do not need each other may run "
            "in one batch." + now
        )

    def begin(self, step: DeployStep) -> None:
        self.running.add(step.id)
        if self.state == "ready":
            self.state = "running"

    def record(self, step: DeployStep, ok: bool, output: str = "") -> None:
        """`step`'s success check passed (`ok`) or not; a failure stops the rollout."""
        self.running.discard(step.id)
        self.outcomes.append(StepOutcome(step.id, ok, output))
        if not ok:
            self.state = "failed"
        elif self.state != "failed":
            self.state = "done" if self.position == len(self.steps) else "running"

    @property
    def failed_step(self) -> DeployStep | None:
        if self.state != "failed":
            return None
        failed = next((o.step_id for o in self.outcomes if not o.ok), None)
        return next((s for s in self.steps if s.id == failed), None)

    def next_action(self) -> str | None:
        """What to propose next: the current step's first command, or a failed step's rollback."""
        failed = self.failed_step
        if failed is not None:
            return failed.rollback
        step = self.current
        return step.actions[0] if step else None

    def summary(self) -> str:
        done = self.position
        if self.state == "failed" and self.failed_step is not None:
            step = self.failed_step
            return (
                f"stopped at step {self.number(step)}/{len(self.steps)} ({step.title}): "
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
    step: DeployStep | None = None,
    check_attempts: int = 1,
    check_interval_s: float = 1.0,
    run_job: JobRunner | None = None,
) -> StepOutcome:
    """Run `step` (default: the current one; the caller checked that it may run): its actions
    (a job step through `run_job`, when given), then its check (retried); record and return
    the outcome.

    Actions are never repeated; only the read-only check is, to give a service time to come up.
    """
    step = step or rollout.current
    if step is None:
        raise RuntimeError(f"no step to run: the rollout is {rollout.state}")
    rollout.begin(step)
    try:
        ok, output = await _attempt(step, run, check_attempts, check_interval_s, run_job)
    except BaseException:
        rollout.running.discard(step.id)  # cancelled or crashed: it may run again
        raise
    rollout.record(step, ok, output)
    return rollout.outcomes[-1]


async def _attempt(
    step: DeployStep,
    run: CommandRunner,
    check_attempts: int,
    check_interval_s: float,
    run_job: JobRunner | None,
) -> tuple[bool, str]:
    if step.by_hand:
        return False, "needs a person: " + "; ".join(step.actions)
    said = ""  # what a job step's job said (its bandwidth, its last lines)
    as_job = bool(step.job) and run_job is not None
    if as_job:
        status, said = await run_job(step)  # type: ignore[misc]
        if status != 0:
            return False, said
    for action in [] if as_job else step.actions:
        status, output = await run(step.host, action)
        if status != 0:
            return False, f"`{action}` exited {status}: {output}"
    ok, output = False, ""
    for attempt in range(check_attempts):
        status, output = await run(step.check.host, step.check.command)
        ok = step.check.passes(status, output)
        if ok or attempt + 1 == check_attempts:
            break
        await asyncio.sleep(check_interval_s)
    return ok, said if (said and ok) else output


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
