"""The policy gate: rules, modes, the plan gate and the approver, in one fail-closed decision.

Order: a deny rule refuses; read-only work runs (unless a rule says ask); in `plan` mode nothing
else runs; before a plan is approved nothing else runs; then the mode and the allow rules decide
whether a human must be asked; `ci` mode refuses whatever would need one. Any approver failure is
a denial.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from pydantic import ValidationError

from agent.loop.calls import GateVerdict, PreparedCall
from agent.loop.events import ApprovalDecisionEvent, ApprovalRequestEvent, Event
from agent.loop.executor import describe_validation_error, judge_risk
from agent.safety.approvals import ApprovalRequest, Approver, Decision, fingerprint
from agent.safety.modes import Mode
from agent.safety.rules import Rule, RuleSet
from tools.base import Risk
from tools.plan import Plan, PlanState

log = structlog.get_logger(__name__)

_DENIAL_ADVICE = "Nothing ran. Do not seek the same effect another way; adapt or ask the user."


def decision_words(decision: Decision) -> str:
    """What the model is told, per decision kind."""
    by = f" by {decision.decided_by}" if decision.decided_by else ""
    note = f": {decision.message}" if decision.message else ""
    if decision.kind == "denied":
        return f"Denied{by}{note}. {_DENIAL_ADVICE}"
    if decision.kind == "timed_out":
        return f"No approval arrived in time{note}; treated as denied. {_DENIAL_ADVICE}"
    if decision.kind == "unavailable":
        return f"No approver could be reached{note}; treated as denied (fail closed). Nothing ran."
    return f"Approved{by}{note}."


class PolicyGate:
    def __init__(
        self,
        *,
        mode: Mode,
        rules: RuleSet | None = None,
        plan: PlanState | None = None,
        approver: Approver | None = None,
        emit: Callable[[Event], Any] = lambda event: None,
        approval_ttl_s: float = 900.0,
    ) -> None:
        self.mode: Mode = mode
        self.rules = rules or RuleSet()
        self.plan = plan or PlanState()
        self.approver = approver
        self.emit = emit
        self.approval_ttl_s = approval_ttl_s
        self._ask_lock = asyncio.Lock()

    async def check(self, prepared: PreparedCall) -> GateVerdict:
        tool, tool_input, hosts = prepared.tool.name, prepared.call.input, prepared.hosts
        rule = self.rules.first_match(tool, tool_input, hosts)
        if rule is not None and rule.effect == "deny":
            return _refuse(f"Denied by rule `{rule.text}` ({rule.source}). {_DENIAL_ADVICE}")
        risk = prepared.risk
        rule_asks = rule is not None and rule.effect == "ask"
        if risk == Risk.READ_ONLY and not rule_asks:
            return GateVerdict(allowed=True)
        if risk > Risk.READ_ONLY and self.mode == "plan":
            return _refuse(
                f"Not run: the session is in plan mode, where only read-only actions run, and this "
                f"is {risk.label} ({prepared.risk_reason}). Describe it in a plan instead."
            )
        if risk > Risk.READ_ONLY and self.plan.approved is None:
            return _refuse(
                f"Not run: no plan has been approved yet, so the session is read-only and this is "
                f"{risk.label} ({prepared.risk_reason}). Use propose_plan with the steps, hosts, "
                "downtime, rollback and checks, and wait for approval."
            )
        if not rule_asks and self._preapproved(risk, rule):
            return GateVerdict(allowed=True)
        if self.mode == "ci":
            return _refuse(
                f"Not run: this {risk.label} action needs a human approval, and in ci mode no one "
                f"can be asked. {_DENIAL_ADVICE}"
            )
        return await self._ask(prepared)

    def _preapproved(self, risk: Risk, rule: Rule | None) -> bool:
        """Allow rules pre-approve mutating work (destructive always asks)."""
        if risk != Risk.MUTATING or rule is None or rule.effect != "allow":
            return False
        if self.mode == "ask":
            return rule.source.startswith("operator")
        return True

    async def _ask(self, prepared: PreparedCall) -> GateVerdict:
        command = getattr(prepared.params, "command", None)
        step = self.plan.step_for(command, prepared.hosts) if isinstance(command, str) else None
        request = ApprovalRequest(
            id=uuid.uuid4().hex[:12],
            fingerprint=fingerprint(prepared.tool.name, prepared.call.input, prepared.hosts),
            tool=prepared.tool.name,
            input=prepared.call.input,
            hosts=prepared.hosts,
            risk=prepared.risk.label,
            reason=prepared.risk_reason,
            plan_step=step,
            summary=prepared.summary,
            expires_at=_expiry(self.approval_ttl_s),
        )
        decision = await self._decide(request, prepared.call.id)
        if not decision.allows:
            return _refuse(decision_words(decision))
        if decision.kind == "approved_with_edit" and decision.edited_input is not None:
            try:
                params = prepared.tool.Input.model_validate(decision.edited_input)
            except ValidationError as exc:
                text = describe_validation_error(prepared.tool.name, exc)
                return _refuse(f"The approver's edit was not valid input, so nothing ran. {text}")
            assessment = judge_risk(prepared.tool, params)
            prepared.risk, prepared.risk_reason = assessment.risk, assessment.reason
            return GateVerdict(allowed=True, params=params)
        return GateVerdict(allowed=True)

    async def review_plan(self, plan: Plan) -> tuple[bool, str]:
        """The plan gate: a human (or the webhook) approves the whole plan, bound to its hash."""
        if self.mode == "ci":
            return False, "ci mode: no one can approve a plan"
        request = ApprovalRequest(
            id=uuid.uuid4().hex[:12],
            fingerprint=plan.digest(),
            tool="propose_plan",
            input=plan.model_dump(mode="json"),
            risk="plan",
            reason=f"approve the plan: {plan.goal} ({plan.step_count()})",
            summary=plan.render(),
            expires_at=_expiry(self.approval_ttl_s),
        )
        decision = await self._decide(request, call_id="plan")
        return decision.allows, decision.message

    async def _decide(self, request: ApprovalRequest, call_id: str) -> Decision:
        self.emit(
            ApprovalRequestEvent(
                call_id=call_id,
                fingerprint=request.fingerprint,
                tool=request.tool,
                input=request.input,
                risk=request.risk,
                reason=request.reason,
                plan_step=request.plan_step,
            )
        )
        decision = await self._ask_approver(request)
        if decision.fingerprint != request.fingerprint:
            decision = Decision(
                kind="denied",
                fingerprint=request.fingerprint,
                message="the decision was for a different request; ignored",
                decided_by="gate",
            )
        self.emit(
            ApprovalDecisionEvent(
                call_id=call_id,
                fingerprint=request.fingerprint,
                decision=decision.kind,
                message=decision.message,
                edited_input=decision.edited_input,
                decided_by=decision.decided_by,
            )
        )
        return decision

    async def _ask_approver(self, request: ApprovalRequest) -> Decision:
        if self.approver is None:
            return Decision(
                kind="unavailable",
                fingerprint=request.fingerprint,
                message="this session has no approver",
                decided_by="gate",
            )
        async with self._ask_lock:  # one question at a time
            try:
                return await self.approver.decide(request)
            except Exception as exc:
                log.exception("approver.failed")
                return Decision(
                    kind="unavailable",
                    fingerprint=request.fingerprint,
                    message=f"the approver failed ({type(exc).__name__}: {exc})",
                    decided_by="gate",
                )


def _refuse(message: str) -> GateVerdict:
    return GateVerdict(allowed=False, message=message)


def _expiry(ttl_s: float) -> str:
    moment = datetime.now(UTC) + timedelta(seconds=ttl_s)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")
