"""The approval webhook's wire format: what Scout sends and which answers count as a decision.

Only three verdicts can come from a webhook (`approved`, `approved_with_edit`, `denied`); the other
two kinds (`timed_out`, `unavailable`) are Scout's own conclusions. An answer is bound to the
request's id and fingerprint: one for any other request or call is rejected, never applied. An
answer is at most MAX_ANSWER_BYTES of JSON with no key given twice (`"decision": "denied",
"decision": "approved"` must not be read either way). For a plan (`tool: propose_plan`),
`"approve_steps": true` with `approved` also approves each step's calls as written. The
request's `input`, `summary` and `reason` are redacted by the gate, with control characters
written as visible escapes.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from agent.safety.approvals import ApprovalRequest, Decision

WEBHOOK_VERDICTS = ("approved", "approved_with_edit", "denied")
CALLBACK_PATH_PREFIX = "/scout/approvals/"
MAX_ANSWER_BYTES = 64 * 1024


class AnswerRejected(Exception):
    """A signed answer that still cannot be taken as a decision (wrong step, malformed)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise AnswerRejected(f"key {key!r} appears more than once")
        seen.add(key)
    return dict(pairs)


def strict_json(body: bytes, source: str) -> Any:
    """`body` as JSON, refusing repeated keys; AnswerRejected says what is wrong."""
    try:
        return json.loads(body, object_pairs_hook=_unique_keys)
    except AnswerRejected as exc:
        raise AnswerRejected(f"{source} is ambiguous JSON ({exc})") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise AnswerRejected(f"{source} is not JSON") from None


def request_payload(
    request: ApprovalRequest, *, expires_at: float, callback_url: str
) -> dict[str, Any]:
    """The JSON body POSTed to the webhook; `expires_at` is when Scout stops waiting."""
    return {
        "type": "approval_request",
        "id": request.id,
        "fingerprint": request.fingerprint,
        "tool": request.tool,
        "input": request.input,
        "hosts": request.hosts,
        "risk": request.risk,
        "reason": request.reason,
        "plan_step": request.plan_step,
        "summary": request.summary,
        "expires_at": request.expires_at
        or datetime.fromtimestamp(expires_at, UTC).isoformat(timespec="seconds"),
        "callback_url": callback_url,
    }


def decision_from_body(body: bytes, request: ApprovalRequest, *, source: str) -> Decision:
    """Parse a verified answer for `request`; raise AnswerRejected when it does not fit."""
    answer = strict_json(body, source)
    if not isinstance(answer, dict):
        raise AnswerRejected(f"{source} is not a JSON object")
    if answer.get("id") != request.id:
        raise AnswerRejected(
            f"{source} answers request {answer.get('id')!r}, not {request.id!r} (an answer must "
            "carry the id of the request it answers)"
        )
    if answer.get("fingerprint") != request.fingerprint:
        raise AnswerRejected(
            f"fingerprint mismatch: {source} is for {answer.get('fingerprint')!r}, "
            f"this step is {request.fingerprint!r}"
        )
    verdict = answer.get("decision")
    if verdict not in WEBHOOK_VERDICTS:
        raise AnswerRejected(
            f"{source} has decision {verdict!r}; expected one of {', '.join(WEBHOOK_VERDICTS)}"
        )
    edited = answer.get("edited_input")
    if verdict == "approved_with_edit" and not isinstance(edited, dict):
        raise AnswerRejected(f"{source} is approved_with_edit without an edited_input object")
    message = answer.get("message") or ""
    decided_by = answer.get("decided_by") or "webhook"
    steps = answer.get("approve_steps") is True and request.is_plan
    return Decision(
        kind=verdict,
        fingerprint=request.fingerprint,
        message=str(message),
        edited_input=edited if verdict == "approved_with_edit" else None,
        decided_by=str(decided_by),
        approve_steps=steps and verdict == "approved",
    )
