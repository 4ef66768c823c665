"""The session's plan and its approval record, the one home the gate, rollout and resume read.

Approve once, exactly: a plan's steps approved as written become single-use approvals. When
the operator approves a plan *with its steps*, each action of each step on each of its hosts
becomes one approval bound to (host, the exact command): bytes, not a normal form
(`tools.plans.plan.step_key`), so no here-doc, quote or indentation can differ. A call is matched by
what its tool declares it will run where (`Tool.commands`), never by the tool's name: a call
that runs exactly one step's next action (an ssh_exec of one command) or exactly all of a
step's actions (a rollout_step) on that step's hosts uses those approvals up and runs without a
question; anything else (one flag, one host, an env, a step whose needed steps have not passed)
asks as usual. After a call that used a step approval fails, the rest are withdrawn: from then
on everything asks. Asking per step stays the default; this only happens when the operator
chose it.

Steps run in an order their `needs` allow: a computed plan's needs are its deployment steps'
own; a free-form plan's steps are sequential. While a step's call runs, that step and every
step that needs it ask; a step without hosts says nowhere its actions may run, so it (and all
that needs it) asks. The grant (`StepApprovals`) lives in `PlanState`, beside the approved plan;
the session state (tools/deploy/rollout/state.py) records it, and rollout progress marks its steps
used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tools.plans.plan import Plan, step_key

Commands = Sequence[tuple[str, str]]


@dataclass(frozen=True)
class StepCall:
    step: int
    action: int
    host: str
    command: str


class StepApprovals:
    """The approved plan's step calls, each usable once, in an order the steps' needs allow."""

    def __init__(self, plan: Plan, needs: dict[int, list[int]] | None = None) -> None:
        self.pending: dict[int, list[StepCall]] = {}
        for number, step in enumerate(plan.steps, 1):
            self.pending[number] = [
                StepCall(number, index, host, step_key(action))
                for index, action in enumerate(step.actions)
                for host in step.hosts
            ]
        count = len(plan.steps)
        sequential = {n: [n - 1] if n > 1 else [] for n in range(1, count + 1)}
        self.needs: dict[int, list[int]] = dict(needs if needs is not None else sequential)
        if plan.proof is not None:  # the proof: one number more, once every step passed
            proof = count + 1
            self.pending[proof] = [
                StepCall(proof, index, host, step_key(action))
                for index, action in enumerate(plan.proof.actions)
                for host in plan.proof.hosts
            ]
            self.needs[proof] = list(range(1, count + 1))
        self.passed: set[int] = set()
        self.running: dict[int, int] = {}
        self.withdrawn: str | None = None
        self.fallback = list(plan.on_failure)
        self.rolling_back: str | None = None

    def take(self, commands: Commands | None) -> int | None:
        """Use up the approvals for a call that runs exactly these (host, command) pairs, if
        they are one ready step's next action or the whole of it; the step's number."""
        if self.withdrawn or not commands:
            return None
        wanted = [(host, step_key(command)) for host, command in commands]
        for number, calls in self.pending.items():
            if not calls or not self._ready(number):
                continue
            used = _match(calls, wanted)
            if used is None:
                continue
            for call in used:
                calls.remove(call)
            self.running[number] = self.running.get(number, 0) + 1
            return number
        return None

    def settle(self, step: int, ok: bool) -> None:
        """A step call that failed (or never finished) withdraws every approval left."""
        self.running[step] -= 1
        if not self.running[step]:
            del self.running[step]
        if not ok:
            self.withdraw(f"step {step} failed")
        elif not self.pending[step] and step not in self.running:
            self.passed.add(step)

    def withdraw(self, why: str, *, roll_back: bool = True) -> None:
        """What is left is withdrawn; a plan that names a rollback (`Plan.on_failure`) is, the
        first time, granted that rollback instead: its steps, in order, and nothing else.
        `roll_back=False` (a call whose effect is unknown): nothing is granted any more."""
        for calls in self.pending.values():
            calls.clear()
        if roll_back and self.fallback and self.rolling_back is None and self.withdrawn is None:
            self._roll_back(why)
            return
        self.withdrawn = why

    def _roll_back(self, why: str) -> None:
        self.rolling_back = why
        base = max(self.pending, default=0)
        for offset, step in enumerate(self.fallback, 1):
            number = base + offset
            self.pending[number] = [
                StepCall(number, index, host, step_key(action))
                for index, action in enumerate(step.actions)
                for host in step.hosts
            ]
            self.needs[number] = [number - 1] if offset > 1 else []

    def mark_passed(self, steps: Sequence[int]) -> None:
        """Steps that passed another way (asked one by one, or before a resume): used up."""
        for number in steps:
            if number in self.pending:
                self.pending[number].clear()
                self.passed.add(number)

    def _ready(self, number: int) -> bool:
        if number in self.running or number in self.passed:
            return False
        return all(need in self.passed for need in self.needs.get(number, []))


def _match(calls: list[StepCall], wanted: list[tuple[str, str]]) -> list[StepCall] | None:
    """The calls `wanted` uses: all of the step's (a whole step), or some hosts of its next
    action; None when it is neither."""
    if [(c.host, c.command) for c in calls] == wanted:
        return list(calls)
    head = calls[0].action
    group = [c for c in calls if c.action == head]
    used = [next((c for c in group if (c.host, c.command) == part), None) for part in wanted]
    if any(c is None for c in used) or len(set(used)) != len(used):
        return None
    return [c for c in used if c is not None]


class PlanState:
    """The session's plans: the latest proposal, the one a human approved, and (when the
    operator approved it with its steps) the grant of its steps' calls (tools/plans/approval.py)."""

    def __init__(self) -> None:
        self.proposed: Plan | None = None
        self.approved: Plan | None = None
        self.approved_hash: str | None = None
        self.grant: StepApprovals | None = None

    def approve(self, plan: Plan, grant: StepApprovals | None = None) -> None:
        self.approved, self.approved_hash = plan, plan.digest()
        self.grant = grant

    def step_for(self, commands: list[tuple[str, str]]) -> str | None:
        """The approved step a call serves: each (host, command) it runs is one of the step's
        actions, on one of its hosts (a step without hosts names none)."""
        if self.approved is None or not commands:
            return None
        wanted = [(host, step_key(command)) for host, command in commands]
        for number, step in enumerate(self.approved.steps, 1):
            keys = {step_key(action) for action in step.actions}
            if all(key and key in keys and (not step.hosts or host in step.hosts)
                   for host, key in wanted):  # fmt: skip
                return f"step {number}: {step.title}"
        return None
