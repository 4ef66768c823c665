"""The gate's approver in an MCP session: it asks for a decision and never waits for one.

An MCP client cannot hold a call open while a person decides (the SDK gives an input-required
call about two seconds), and what a client answers is no proof a person answered: a host hook
can accept every form. So when the gate asks, the question goes to Scout's own approvers (the
desk that `scout approvals` reads, or the signed webhook), and the call comes back at once as
pending, with the approval's id. The client calls again with that id; the gate asks again, and
this approver hands over the decision if there is one. A decision authorises only the call it
was given for (its fingerprint: tool, exact input, hosts), for the principal who asked, before
it expires, once. Nothing the client sends can make a decision: only the id of one that exists.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field

import structlog

from agent.mcp.desk import ApprovalDesk
from agent.safety.approvals import ApprovalRequest, Approver, Decision, DecisionKind

log = structlog.get_logger(__name__)

DECIDED_BY = "scout mcp"


@dataclass
class CallAsk:
    """One MCP call as the approver sees it: who sent it, the approval it came back with, and
    (filled in here) the approval left pending for it or the decision that refused it."""

    principal: str
    client: str
    approval_id: str | None = None
    pending: list[PendingApproval] = field(default_factory=list)
    refused: list[Decision] = field(default_factory=list)


#: the MCP call being run; set by the server for each call (asyncio tasks inherit it)
CURRENT_CALL: ContextVar[CallAsk | None] = ContextVar("scout_mcp_call", default=None)


@dataclass
class PendingApproval:
    request: ApprovalRequest
    principal: str
    expires: float
    decision: Decision | None = None
    used: bool = False
    asking: asyncio.Task[None] | None = None


class ClientCallApprover:
    """Approver for the gate: decisions come from `decider` (the webhook) when there is one,
    else from the desk; either way a person's or the webhook's, never the client's."""

    def __init__(
        self,
        desk: ApprovalDesk,
        *,
        session: str,
        ttl_s: float,
        decider: Approver | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.desk = desk
        self.session = session
        self.ttl_s = ttl_s
        self.decider = decider
        self.clock = clock
        self.approvals: dict[str, PendingApproval] = {}

    async def decide(self, request: ApprovalRequest) -> Decision:
        ask = CURRENT_CALL.get()
        if ask is None:  # only MCP calls reach this approver; anything else is a bug
            return _final(request, "unavailable", "no MCP call is asking")
        if ask.approval_id is None:
            return self._post(request, ask)
        decision = self._collect(request, ask, ask.approval_id)
        if decision.kind != "pending" and not decision.allows:
            ask.refused.append(decision)
        return decision

    def _post(self, request: ApprovalRequest, ask: CallAsk) -> Decision:
        """A new question: on the desk (or to the webhook), and the call comes back pending."""
        pending = PendingApproval(request, ask.principal, self.clock() + self.ttl_s)
        self.approvals[request.id] = pending
        if self.decider is not None:
            pending.asking = asyncio.create_task(self._ask_decider(pending))
        else:
            self.desk.post(
                request, principal=ask.principal, client=ask.client, session=self.session
            )
        ask.pending.append(pending)
        return _pending(request, request.id, self._where())

    async def _ask_decider(self, pending: PendingApproval) -> None:
        try:
            pending.decision = await self.decider.decide(pending.request)  # type: ignore[union-attr]
        except Exception as exc:  # an approver that fails denies (fail closed)
            log.exception("mcp.approver.failed")
            why = f"the approver failed ({exc})"
            pending.decision = _final(pending.request, "unavailable", why)

    def _collect(self, request: ApprovalRequest, ask: CallAsk, approval_id: str) -> Decision:
        """The call came back with an approval id: the decision, once, for this call only."""
        pending = self.approvals.get(approval_id)
        if pending is None:
            return _final(request, "denied", f"there is no approval {approval_id} in this session")
        if pending.used:
            return _final(request, "denied", f"approval {approval_id} was used already")
        if pending.request.fingerprint != request.fingerprint:
            return _final(
                request,
                "denied",
                f"approval {approval_id} was asked for another call (another tool, input or "
                "hosts); call again without it to ask about this one",
            )
        if pending.principal != ask.principal:
            return _final(request, "denied", f"approval {approval_id} was asked by someone else")
        if self.clock() > pending.expires:
            self._close(approval_id, pending)
            return _final(request, "timed_out", f"approval {approval_id} expired undecided")
        decision = pending.decision or self._from_desk(approval_id)
        if decision is None:
            ask.pending.append(pending)
            return _pending(request, approval_id, self._where())
        self._close(approval_id, pending)
        return decision

    def _from_desk(self, approval_id: str) -> Decision | None:
        if self.decider is not None:
            return None
        return self.desk.answer(approval_id)

    def _close(self, approval_id: str, pending: PendingApproval) -> None:
        pending.used = True
        if self.decider is None:
            self.desk.withdraw(approval_id)

    def _where(self) -> str:
        if self.decider is not None:
            return "the approval webhook decides it"
        return "a person decides it with `scout approvals` at a terminal"

    async def aclose(self) -> None:
        """The session ends: unanswered questions are withdrawn from the desk and the webhook."""
        for approval_id, pending in self.approvals.items():
            if pending.asking is not None:
                pending.asking.cancel()
            if not pending.used and self.decider is None:
                self.desk.withdraw(approval_id)


def _pending(request: ApprovalRequest, approval_id: str, where: str) -> Decision:
    return Decision(
        kind="pending",
        fingerprint=request.fingerprint,
        message=(
            f"approval {approval_id} is pending ({where}); call again with the same input and "
            f'"approval_id": "{approval_id}" once it is decided'
        ),
        decided_by=DECIDED_BY,
    )


def _final(request: ApprovalRequest, kind: DecisionKind, message: str) -> Decision:
    return Decision(
        kind=kind, fingerprint=request.fingerprint, message=message, decided_by=DECIDED_BY
    )
