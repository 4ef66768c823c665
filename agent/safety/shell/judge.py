"""The agent's ShellJudge: a command line's risk by the classifier, the way tools ask for it.

The builder hands `judge_shell` to every tool that runs shell (ssh_exec, docker_ctl exec,
rollout_step). Extra environment variables or a working folder can change what even a read-only
program does (PATH, LD_PRELOAD, a relative path), so with either the call is at least mutating.
"""

from __future__ import annotations

from collections.abc import Mapping

from agent.safety.shell.classifier import classify_command
from tools.base import Risk, RiskAssessment


def judge_shell(
    command: str, *, env: Mapping[str, str] | None = None, cwd: str | None = None
) -> RiskAssessment:
    verdict = classify_command(command)
    risk, reasons = verdict.risk, list(verdict.reasons)
    if risk < Risk.MUTATING and (env or cwd):
        settings = []
        if env:
            settings.append(f"sets {', '.join(sorted(env))} in its environment")
        if cwd:
            settings.append(f"runs in the folder {cwd}")
        risk, reasons = Risk.MUTATING, [" and ".join(settings) + "; treated as mutating"]
    return RiskAssessment(risk, "; ".join(reasons))
