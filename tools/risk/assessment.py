"""How risky one call is: the level the gate decides on, and the reason a person reads.

Ordered so `max()` over a call's parts picks the worst; a tool's `risk()` returns an assessment,
and a ShellJudge (shell_judge.py) returns one for a command line.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Risk(IntEnum):
    """How much a call can change the world; ordered so `max()` picks the worst part."""

    READ_ONLY = 0
    MUTATING = 1
    DESTRUCTIVE = 2

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def from_label(cls, label: str) -> Risk:
        return cls[label.upper()]


@dataclass(frozen=True)
class RiskAssessment:
    """How risky one call is, and the reason in words the operator and the model can read."""

    risk: Risk
    reason: str
