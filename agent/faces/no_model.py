"""`NoModel`: the model client of a session that only the operator drives.

`scout exec`, `scout stop` and `scout teardown` open a real session (gate, approvals, wall,
transcript) and send it the operator's own calls; no model is ever asked, and one that was would
be a bug, so asking raises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.loop.model_turn import AssistantTurn, RetrySink, TextSink, TurnRequest


class NoModel:
    """A model client that refuses to be asked: `face` names the command, for the error."""

    def __init__(self, face: str) -> None:
        self.face = face

    async def stream(
        self, request: TurnRequest, on_text: TextSink, on_retry: RetrySink | None = None
    ) -> AssistantTurn:
        raise RuntimeError(f"scout {self.face} asks no model")
