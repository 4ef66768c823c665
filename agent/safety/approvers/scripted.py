"""An approver that answers from a prepared list, in order: for the demo and for scripted runs.

When the list runs out it denies, so a script that is too short can never approve by accident.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from agent.safety.approvals import ApprovalRequest, Decision, DecisionKind


class ScriptedApprover:
    def __init__(self, answers: Iterable[tuple[DecisionKind, str] | dict[str, Any]], name: str):
        self._answers: deque[tuple[DecisionKind, str, dict[str, Any] | None, bool]] = deque()
        for answer in answers:
            if isinstance(answer, dict):
                self._answers.append(
                    (
                        answer["kind"],
                        answer.get("message", ""),
                        answer.get("edited_input"),
                        bool(answer.get("approve_steps")),
                    )
                )
            else:
                self._answers.append((answer[0], answer[1], None, False))
        self.name = name
        self.seen: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.seen.append(request)
        if not self._answers:
            return Decision(
                kind="denied",
                fingerprint=request.fingerprint,
                message="the approval script has no more answers",
                decided_by=self.name,
            )
        kind, message, edited, steps = self._answers.popleft()
        return Decision(
            kind=kind,
            fingerprint=request.fingerprint,
            message=message,
            edited_input=edited,
            decided_by=self.name,
            approve_steps=steps,
        )
