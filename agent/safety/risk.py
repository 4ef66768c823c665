"""Judging a call's risk: the tool's own action, and every shell command it would run.

Tools know their actions (stopping a container is destructive); the agent's classifier knows
shell. The worst of the two decides, with the reason that decided it.
"""

from __future__ import annotations

from pydantic import BaseModel

from agent.safety.shell.classifier import classify_command
from tools.base import Risk, RiskAssessment, Tool


def assess_risk(tool: Tool, params: BaseModel) -> tuple[Risk, str]:
    judged = tool.risk(params)
    if isinstance(judged, RiskAssessment):  # a tool on the one risk path judges itself
        return judged.risk, judged.reason
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
