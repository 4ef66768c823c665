"""Judging a call's risk: the tool's own action, and every shell command it would run.

Tools know their actions (stopping a container is destructive); the agent's classifier knows
shell. The worst of the two decides, with the reason that decided it. `ssh_exec` and
`docker_ctl` are judged as whole calls (command with env and cwd; action with every flag) by the
same functions their `risk()` uses under the one-risk-path contract (judge_shell,
docker_call_risk).
"""

from __future__ import annotations

from pydantic import BaseModel

from agent.safety.shell.classifier import classify_command
from agent.safety.shell.judge import judge_shell
from tools.base import Risk, Tool
from tools.docker.params import DockerCtlInput
from tools.docker.risk import docker_call_risk
from tools.ssh_exec import SSHExecInput


def assess_risk(tool: Tool, params: BaseModel) -> tuple[Risk, str]:
    if isinstance(params, SSHExecInput):
        whole = judge_shell(params.command, env=params.env, cwd=params.cwd)
        return whole.risk, whole.reason
    if isinstance(params, DockerCtlInput):
        whole = docker_call_risk(params, judge_shell)
        return whole.risk, whole.reason
    commands = tool.shell_commands(params)
    if not commands:
        return tool.risk(params), tool.risk_reason(params)
    risk = tool.intrinsic_risk(params)
    reason = f"{tool.name} itself is {risk.label}"
    for command in commands:
        verdict = classify_command(command)
        if verdict.risk >= risk:
            risk, reason = verdict.risk, "; ".join(verdict.reasons) or reason
    return risk, reason
