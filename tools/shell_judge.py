"""The contract for judging shell: tools that run shell receive a `ShellJudge` and never import it.

The agent's implementation (`agent.safety.shell.judge.judge_shell`) parses the command and judges
it together with the environment and working folder it would run with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from tools.base import RiskAssessment


class ShellJudge(Protocol):
    def __call__(
        self, command: str, *, env: Mapping[str, str] | None = None, cwd: str | None = None
    ) -> RiskAssessment: ...
