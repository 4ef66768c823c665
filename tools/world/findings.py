"""A finding: what one check found about the hosts, how serious it is, and what to do about it.

The world model lists findings after every probe; a deployment's preflight report is a list of
them too, with an `ok` line for each check that found nothing.
"""

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

Severity = Literal["blocker", "warning", "info", "ok"]
SEVERITY_ORDER: dict[Severity, int] = {"blocker": 0, "warning": 1, "info": 2, "ok": 3}
GB = 1_000_000_000
FitState = Literal["fits", "fits_once_stopped", "short"]


class FitClaim(BaseModel):
    """What a fit-related message says, as data: does a model of `size_bytes` fit `host` as one
    of `nodes` at `utilization`, now or once `freeing` stops (tools/checks/fit_rule.py
    decides). Kept beside the message so a test can hold every claim of a session against the
    others; not serialized, so what the model reads is the message alone."""

    host: str
    nodes: int
    size_bytes: int
    utilization: float
    state: FitState
    freeing: list[str] = []  # what "once stopped" would stop
    context_kv_bytes: float = 0.0  # the KV of the context asked (0: none asked)


class Finding(BaseModel):
    severity: Severity
    check: str = Field(description="The check that found it: memory, fabric, docker, versions…")
    kind: str = Field(description="What exactly: model_does_not_fit, roce_link_down, …")
    hosts: list[str]
    message: str
    fix: str | None = None
    needs_person: bool = Field(
        default=False, description="Only a person at the machine can fix it."
    )
    evidence: list[str] = []
    fit: list[FitClaim] = Field(default=[], exclude=True)

    @property
    def text(self) -> str:
        """The finding as one sentence: what is wrong, then what to do."""
        return self.message + (f"; {self.fix}" if self.fix else "")

    @property
    def summary(self) -> str:
        """`message → fix`: how a plan lists what stands in its way."""
        return self.message + (f" → {self.fix}" if self.fix else "")

    def line(self) -> str:
        """One line of a preflight report: `[severity] check: message → fix`."""
        return f"[{self.severity}] {self.check}: {self.summary}"


def by_severity(findings: Iterable[Finding]) -> list[Finding]:
    """Blockers first, then warnings, info and ok; the order within a severity is kept."""
    return sorted(findings, key=lambda f: SEVERITY_ORDER[f.severity])


def gb(value: int) -> str:
    """Bytes as whole decimal gigabytes, the way people size models ("~119 GB")."""
    return f"{value / GB:.0f} GB"
