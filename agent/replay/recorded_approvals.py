"""Answering a re-driven session's approvals from its recording, call by call.

A recorded decision answers only the request it was made for: the same call (tool_use id, or
"plan") with the same fingerprint. Taking them in order instead let an edited recording approve
whatever came next (a decision with fingerprint `sha256:0` ran `docker rm -f vllm_node`). A
request the recording has no decision for is drift: it is denied, so is every later one, and
`halt_reason` tells the replay to stop, so nothing runs on a recording that no longer matches.
"""

from __future__ import annotations

from collections import defaultdict, deque

from agent.loop.events import ApprovalDecisionEvent, Event
from agent.safety.approvals import ApprovalRequest, Decision

DRIFT_DENIAL = (
    "the recording holds no decision for this call with this fingerprint (drift); replays never "
    "run what was not approved for exactly this call"
)
AFTER_DRIFT_DENIAL = "an earlier approval did not match the recording; nothing more runs on it"


class RecordedApprover:
    """Replays the decisions in `events`, each once, for the call and fingerprint it names."""

    def __init__(self, events: list[Event], name: str = "the recording") -> None:
        self.name = name
        self.drift: list[str] = []
        self._answers: dict[tuple[str, str], deque[ApprovalDecisionEvent]] = defaultdict(deque)
        for event in events:
            if isinstance(event, ApprovalDecisionEvent):
                self._answers[(event.call_id, event.fingerprint)].append(event)

    async def decide(self, request: ApprovalRequest) -> Decision:
        if self.drift:
            return self._deny(request, AFTER_DRIFT_DENIAL)
        recorded = self._answers.get((request.call_id or "", request.fingerprint))
        if not recorded:
            self.drift.append(
                f"approval for call {request.call_id} ({request.tool}, {request.fingerprint}): "
                "the recording has no decision for it; denied, and no later step ran"
            )
            return self._deny(request, DRIFT_DENIAL)
        event = recorded.popleft()
        return Decision(
            kind=event.decision,
            fingerprint=request.fingerprint,
            message=event.message,
            edited_input=event.edited_input,
            decided_by=self.name,
            approve_steps=event.approve_steps,
        )

    def halt_reason(self) -> str | None:
        """Why the replay must stop (an approval did not match the recording), or None."""
        if not self.drift:
            return None
        return "an approval did not match the recording, so nothing more runs on it"

    def _deny(self, request: ApprovalRequest, message: str) -> Decision:
        return Decision(
            kind="denied", fingerprint=request.fingerprint, message=message, decided_by=self.name
        )
