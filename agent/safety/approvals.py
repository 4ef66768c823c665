"""What an approval request carries and what a decision says, bound together by a fingerprint.

The fingerprint covers the tool, its exact input and the hosts, so a decision can only ever
authorise the exact call that was shown; each decision is used once. Only key order is
normalised: strings are hashed as they are, because whitespace can matter (`ls /tmp rm -rf /data`
is one command, `ls /tmp\nrm -rf /data` is two).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

# pending: asked for and not decided yet; the call did not run, and asking again with the
# approval's id runs it once a person (or the webhook) has decided (agent/mcp/approvals.py)
DecisionKind = Literal[
    "approved", "approved_with_edit", "denied", "timed_out", "unavailable", "pending"
]


def fingerprint(tool: str, tool_input: dict[str, Any], hosts: list[str]) -> str:
    body = json.dumps(
        {"tool": tool, "input": tool_input, "hosts": sorted(hosts)},
        sort_keys=True,
        separators=(",", ":"),
    )
    return "sha256:" + hashlib.sha256(body.encode()).hexdigest()


#: the call_id the plan gate asks and records its decisions under (no tool_use id is this)
PLAN_CALL_ID = "plan"
#: the risk a plan review carries: no single call's risk label is this
PLAN_RISK = "plan"


class ApprovalRequest(BaseModel):
    """`id` names this question (each is new); `call_id` names the call it is about: the
    tool_use id, or PLAN_CALL_ID for the plan gate."""

    id: str
    fingerprint: str
    tool: str
    input: dict[str, Any]
    hosts: list[str] = Field(default_factory=list)
    risk: str
    reason: str
    plan_step: str | None = None
    summary: str = ""
    expires_at: str | None = None
    call_id: str | None = None

    @property
    def is_plan(self) -> bool:
        """Whether this asks for a whole plan (approvers show the plan and offer its steps)."""
        return self.risk == PLAN_RISK


class Decision(BaseModel):
    """A decision; `approve_steps` (plans only) also approves each step's calls as written."""

    kind: DecisionKind
    fingerprint: str
    message: str = ""
    edited_input: dict[str, Any] | None = None
    decided_by: str = ""
    approve_steps: bool = False

    @property
    def allows(self) -> bool:
        return self.kind in {"approved", "approved_with_edit"}


class Approver(Protocol):
    """Answers one request; must never raise for an expected failure (say `unavailable`)."""

    async def decide(self, request: ApprovalRequest) -> Decision: ...
