"""The gate every call passes before it runs, and the fail-closed default.

The executor asks the gate about every call; the gate answers allowed (possibly with edited input)
or refused with words the model can act on. The approvals issue brings policy rules, plans and
human approvers; until a gate says yes, nothing but read-only work runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from tools.base import Reason, Tool, ToolResult
from tools.risk.assessment import Risk


@dataclass
class ToolCall:
    """One `tool_use` block as the model sent it."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass
class PreparedCall:
    """A call whose input validated, with what the gate needs to judge it."""

    call: ToolCall
    tool: Tool
    params: BaseModel
    risk: Risk
    risk_reason: str
    hosts: list[str] = field(default_factory=list)
    summary: str = ""


@dataclass
class GateVerdict:
    """The gate's answer; `settle` (if set) hears how the call ended (None: it never did).
    `human`: a person decided (an approver, or a step of a plan a person approved); a read-only
    call no human decided runs inside the wall on its hosts (tools/wall/)."""

    allowed: bool
    message: str = ""
    params: BaseModel | None = None
    settle: Callable[[ToolResult | None], None] | None = None
    human: bool = False
    reason: Reason | None = None  # a refusal's kind and fields, beside `message`


class Gate(Protocol):
    async def check(self, prepared: PreparedCall) -> GateVerdict: ...


class ReadOnlyGate:
    """Lets read-only calls through and refuses everything else: the safe default."""

    async def check(self, prepared: PreparedCall) -> GateVerdict:
        if prepared.risk == Risk.READ_ONLY:
            return GateVerdict(allowed=True)
        return GateVerdict(
            allowed=False,
            message=(
                f"Not run: {prepared.tool.name} here is {prepared.risk.label} "
                f"({prepared.risk_reason}) and this session has no approver, so only read-only "
                "actions can run. Tell the user what you would do and why instead."
            ),
        )
