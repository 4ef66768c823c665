"""The agent's ShellJudge: a command judged together with the environment and folder it runs in.

`ssh_exec`'s `env` is exported before the command runs, so a steering variable there (`LD_PRELOAD`,
`GIT_CONFIG_*`, `LESSOPEN`, `PS4` with `SHELLOPTS`, `PATH`) is as risky as one set on the command
line; `cwd` is where relative paths land (a write into `/etc` that way is destructive).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from agent.safety.shell.classifier import classify_command
from agent.safety.shell.endpoints import INVENTORY
from agent.safety.shell.environment import steering_reason
from tools.risk.assessment import Risk, RiskAssessment
from tools.risk.shell_judge import ShellJudge


def judge_shell(
    command: str, *, env: Mapping[str, str] | None = None, cwd: str | None = None
) -> RiskAssessment:
    verdict = classify_command(command, cwd=cwd)
    risk, reasons = verdict.risk, list(verdict.reasons)
    steering = [
        f"env: {why}"
        for name, value in (env or {}).items()
        if (why := steering_reason(name, value))
    ]
    if steering and risk <= Risk.MUTATING:
        reasons = steering + reasons if risk == Risk.MUTATING else steering
        risk = Risk.MUTATING
    return RiskAssessment(risk, "; ".join(reasons))


def inventory_judge(hosts: Iterable[str]) -> ShellJudge:
    """`judge_shell` for a session whose inventory names `hosts` (names and addresses): a read
    sent to one of them (`curl http://spark-b:8000/health`) is as read-only as one to loopback."""
    known = frozenset(hosts)

    def judge(
        command: str, *, env: Mapping[str, str] | None = None, cwd: str | None = None
    ) -> RiskAssessment:
        token = INVENTORY.set(known)
        try:
            return judge_shell(command, env=env, cwd=cwd)
        finally:
            INVENTORY.reset(token)

    return judge
