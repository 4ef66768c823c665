"""What a tool that runs shell asks before it runs: how risky is this command line?

Tools do not judge shell themselves; they receive a ShellJudge in their constructor (the agent's
is agent/safety/shell/judge.py:judge_shell, which parses the command) and make it part of their
`risk()`. A judge never widens: anything it cannot prove read-only is at least mutating.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from tools.risk.assessment import RiskAssessment


class ShellJudge(Protocol):
    def __call__(
        self, command: str, *, env: Mapping[str, str] | None = None, cwd: str | None = None
    ) -> RiskAssessment: ...
