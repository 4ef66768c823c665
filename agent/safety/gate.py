"""The policy gate: rules, modes, the plan gate and the approver, in one fail-closed decision.

The policy (`policy.policy_answer`) says allow, ask or deny; an answer of ask is settled by a
step the operator approved with the plan (the plan state's grant, tools/plans/approval.py,
matched on what the tool declares it runs where), or else by the approver. What the
approver is shown is redacted and has its control characters made visible. Any approver failure
is a denial.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from pydantic import ValidationError

from agent.loop.calls import GateVerdict, PreparedCall, ToolCall
from agent.loop.events import ApprovalDecisionEvent, ApprovalRequestEvent, Event
from agent.loop.executor import describe_validation_error, judge_risk
from agent.safety.approvals import (
    PLAN_CALL_ID,
    PLAN_RISK,
    ApprovalRequest,
    Approver,
    Decision,
    fingerprint,
)
from agent.safety.display import visible, visible_data
from agent.safety.modes import Mode
from agent.safety.policy import PolicyAnswer, policy_answer
from agent.safety.redact import Redactor
from agent.safety.rules import RuleSet
from tools.base import Reason
from tools.plans.approval import PlanState
from tools.plans.plan import Plan
from tools.risk.assessment import Risk

log = structlog.get_logger(__name__)

MAX_EDIT_ROUNDS = 3
_DENIAL_ADVICE = "Nothing ran. Do not seek the same effect another way; adapt or ask the user."


def decision_words(decision: Decision) -> str:
    """What the model is told, per decision kind."""
    by = f" by {decision.decided_by}" if decision.decided_by else ""
    note = f": {decision.message}" if decision.message else ""
    if decision.kind == "denied":
        return f"Denied{by}{note}. {_DENIAL_ADVICE}"
    if decision.kind == "timed_out":
        return f"No approval arrived in time{note}; treated as denied. {_DENIAL_ADVICE}"
    if decision.kind == "pending":
        return f"Not run yet: {decision.message}."
    if decision.kind == "unavailable":
        return f"No approver could be reached{note}; treated as denied (fail closed). Nothing ran."
    return f"Approved{by}{note}."


#: who decided a call the approved plan covered (no person was asked for it)
PLAN_APPROVAL = "plan approval"


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
        redactor: Redactor | None = None,
    ) -> None:
        self.mode: Mode = mode
        self.rules = rules or RuleSet()
        self.plan = plan or PlanState()
        self.approver = approver
        self.emit = emit
        self.approval_ttl_s = approval_ttl_s
        self.redactor = redactor or Redactor()
        self._ask_lock = asyncio.Lock()
        self._edit_rounds: dict[str, int] = {}

    async def check(self, prepared: PreparedCall) -> GateVerdict:
        risk, reason = prepared.risk, prepared.risk_reason
        answer = policy_answer(
            tool=prepared.tool.name,
            tool_input=prepared.call.input,
            hosts=prepared.hosts,
            risk=risk,
            reason=reason,
            rules=self.rules,
            mode=self.mode,
            plan_approved=self.plan.approved is not None,
        )
        if answer.decision == "allow":
            return GateVerdict(allowed=True)
        refusal = _refuse(_refusal_words(answer, risk, reason), answer.ground, risk=risk.label)
        if answer.decision == "deny" and answer.ground != "ci":
            return refusal
        # What needs a human may run on a step a human approved with the plan, ahead of time:
        # in ci too, where no one can be asked now (a resumed plan's grant holds in every mode).
        step = await self._plan_step_approval(prepared)
        if step is not None:
            return step
        if answer.decision == "deny":
            return refusal
        return await self._ask(prepared)

    async def _plan_step_approval(self, prepared: PreparedCall) -> GateVerdict | None:
        """A call that is exactly the next step the operator approved with the plan runs."""
        approvals = self.plan.grant
        if approvals is None:
            return None
        step = approvals.take(prepared.tool.commands(prepared.params))
        if step is None:
            return None
        request = self._request(prepared, plan_step=self._step_title(step))
        self.emit(_request_event(request, prepared.call.id))
        self.emit(
            ApprovalDecisionEvent(
                call_id=prepared.call.id,
                fingerprint=request.fingerprint,
                decision="approved",
                message=f"{self._step_label(step)} as approved with the plan",
                decided_by=PLAN_APPROVAL,
            )
        )
        return GateVerdict(
            allowed=True,
            settle=lambda result: approvals.settle(
                step, result is not None and not result.is_error
            ),
            human=True,
        )

    def _step_label(self, number: int) -> str:
        plan = self.plan.approved
        proof = plan is not None and plan.proof is not None and number == len(plan.steps) + 1
        return "the proof" if proof else f"step {number}"

    def _step_title(self, number: int) -> str | None:
        plan = self.plan.approved
        if plan is not None and number == len(plan.steps) + 1 and plan.proof is not None:
            return f"the proof: {plan.proof.title}"
        if plan is None or number > len(plan.steps):
            return None
        return f"step {number}: {plan.steps[number - 1].title}"

    def _request(self, prepared: PreparedCall, *, plan_step: str | None) -> ApprovalRequest:
        """The request as an approver sees it: redacted, control characters made visible."""
        shown = self.redactor.data
        return ApprovalRequest(
            id=uuid.uuid4().hex[:12],
            fingerprint=fingerprint(prepared.tool.name, prepared.call.input, prepared.hosts),
            tool=prepared.tool.name,
            input=visible_data(shown(prepared.call.input)),
            hosts=prepared.hosts,
            risk=prepared.risk.label,
            reason=visible(shown(prepared.risk_reason)),
            plan_step=visible(plan_step) if plan_step else None,
            summary=visible(shown(prepared.summary)),
            expires_at=_expiry(self.approval_ttl_s),
            call_id=prepared.call.id,
        )

    async def _ask(self, prepared: PreparedCall) -> GateVerdict:
        step = self.plan.step_for(prepared.tool.commands(prepared.params) or [])
        request = self._request(prepared, plan_step=step)
        decision = await self._decide(request, prepared.call.id)
        if not decision.allows:
            return _refuse(decision_words(decision), decision.kind, decided_by=decision.decided_by)
        if decision.kind == "approved_with_edit":
            edited = decision.edited_input
            if edited is not None:  # built on the redacted view: keep what it left alone
                edited = restore_hidden(edited, request.input, prepared.call.input)
            return await self._check_edit(prepared, edited)
        return GateVerdict(allowed=True, human=True)

    async def _check_edit(
        self, original: PreparedCall, edited_input: dict[str, Any] | None
    ) -> GateVerdict:
        """An approver's edit is a new call: validated, classified, held to the deny and ask
        rules and the plan gate, and asked about again when it reaches other hosts, is riskier,
        or meets an ask rule the original did not. On approval `original` takes the edit's
        risk and hosts, so what runs and what is recorded is the edited call."""
        if edited_input is None:
            return _refuse(
                "The approver answered 'approved with edit' without an edit; nothing ran.",
                "edit_missing",
            )
        call_id = original.call.id
        rounds = self._edit_rounds.get(call_id, 0)
        if rounds >= MAX_EDIT_ROUNDS:
            return _refuse(
                f"The approver edited this call {rounds + 1} times in a row; nothing ran. Ask the "
                "user what they want instead.",
                "edit_rounds",
                rounds=rounds + 1,
            )
        edited = _prepare_edit(original, edited_input)
        if isinstance(edited, GateVerdict):
            return edited
        self._edit_rounds[call_id] = rounds + 1
        try:
            tool = original.tool.name
            denied = self.rules.careful_match("deny", tool, edited_input, edited.hosts) is not None
            ask = self.rules.careful_match("ask", tool, edited_input, edited.hosts)
            before = self.rules.careful_match("ask", tool, original.call.input, original.hosts)
            same_shape = set(edited.hosts) == set(original.hosts) and edited.risk <= original.risk
            new_ask = ask is not None and ask != before
            if same_shape and not new_ask and not denied:
                verdict = GateVerdict(allowed=True, params=edited.params)
            else:
                verdict = await self.check(edited)
        finally:
            if rounds == 0:
                self._edit_rounds.pop(call_id, None)
        if not verdict.allowed:
            return _refuse(
                f"The approver's edit is a new call, and it did not pass: {verdict.message}",
                "edit_refused",
                refused=_first_refusal(verdict.reason),
            )
        original.risk, original.risk_reason = edited.risk, edited.risk_reason
        original.hosts, original.summary = edited.hosts, edited.summary
        return GateVerdict(allowed=True, params=verdict.params or edited.params, human=True)

    async def review_plan(self, plan: Plan, tool: str) -> tuple[bool, str, bool]:
        """The plan gate: a human (or the webhook) approves the whole plan, bound to its hash;
        (approved, the approver's note, approved with its steps as written). `tool` is the
        asking tool's name (one that declares `approves_plan`), as the transcript records it."""
        if self.mode == "ci":
            return False, "ci mode: no one can approve a plan", False
        request = ApprovalRequest(
            id=uuid.uuid4().hex[:12],
            fingerprint=plan.digest(),
            tool=tool,
            input=visible_data(self.redactor.data(plan.model_dump(mode="json"))),
            risk=PLAN_RISK,
            reason=visible(
                self.redactor.text(f"approve the plan: {plan.goal} ({plan.step_count()})")
            ),
            summary=visible(self.redactor.text(plan.render())),
            expires_at=_expiry(self.approval_ttl_s),
            call_id=PLAN_CALL_ID,
        )
        decision = await self._decide(request, call_id=PLAN_CALL_ID)
        return decision.allows, decision.message, decision.allows and decision.approve_steps

    async def _decide(self, request: ApprovalRequest, call_id: str) -> Decision:
        self.emit(_request_event(request, call_id))
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
                approve_steps=decision.approve_steps,
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


def _request_event(request: ApprovalRequest, call_id: str) -> ApprovalRequestEvent:
    return ApprovalRequestEvent(
        call_id=call_id,
        fingerprint=request.fingerprint,
        tool=request.tool,
        input=request.input,
        risk=request.risk,
        reason=request.reason,
        plan_step=request.plan_step,
    )


def restore_hidden(
    edited: dict[str, Any], shown: dict[str, Any], original: dict[str, Any]
) -> dict[str, Any]:
    """An edit built on the redacted view keeps the real values of the fields it left alone."""
    return {
        key: original[key] if key in original and value == shown.get(key) else value
        for key, value in edited.items()
    }


def _refusal_words(answer: PolicyAnswer, risk: Risk, reason: str) -> str:
    """What the model is told when the policy refuses, in words it can act on."""
    if answer.ground == "deny_rule":
        return f"{answer.why[0].upper()}{answer.why[1:]}. {_DENIAL_ADVICE}"
    if answer.ground == "plan_mode":
        return (
            f"Not run: the session is in plan mode, where only read-only actions run, and this "
            f"is {risk.label} ({reason}). Describe it in a plan instead."
        )
    if answer.ground == "no_plan":
        return (
            f"Not run: no plan has been approved yet, so the session is read-only and this is "
            f"{risk.label} ({reason}). Use propose_plan with the steps, hosts, downtime, "
            "rollback and checks, and wait for approval."
        )
    return (
        f"Not run: this {risk.label} action needs a human approval, and in ci mode no one "
        f"can be asked. {_DENIAL_ADVICE}"
    )


def _prepare_edit(
    original: PreparedCall, edited_input: dict[str, Any]
) -> PreparedCall | GateVerdict:
    """The edited call, prepared as the executor prepares a call, or the refusal saying why not."""
    tool = original.tool
    try:
        params = tool.Input.model_validate(edited_input)
    except ValidationError as exc:
        text = describe_validation_error(tool.name, exc)
        return _refuse(
            f"The approver's edit was not valid input, so nothing ran. {text}", "edit_invalid"
        )
    assessment = judge_risk(tool, params)  # a classifier bug counts as destructive
    risk, reason = assessment.risk, assessment.reason
    return PreparedCall(
        call=ToolCall(original.call.id, original.call.name, edited_input),
        tool=tool,
        params=params,
        risk=risk,
        risk_reason=reason,
        hosts=tool.hosts(params),
        summary=tool.summary(params),
    )


def _first_refusal(reason: Reason | None) -> str | None:
    """What refused an edit in the end, through edits of edits."""
    if reason is not None and reason.kind == "edit_refused":
        return reason.fields.get("refused")
    return reason.kind if reason else None


def _refuse(message: str, kind: str, **fields: Any) -> GateVerdict:
    return GateVerdict(allowed=False, message=message, reason=Reason(kind=kind, fields=fields))


def _expiry(ttl_s: float) -> str:
    moment = datetime.now(UTC) + timedelta(seconds=ttl_s)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")
