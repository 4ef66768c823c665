"""One MCP call through Scout's own session: the same executor, gate, wall, grant and transcript.

The bridge knows nothing of the wire (agent/mcp/server.py speaks it): it opens the session on
the first call that needs it, lists the tools as the model sees them (plus `approval_id`),
records who called, runs the call with `Session.run_operator_calls` (exactly the model's path,
without a model), and says what became of it: done, refused, or waiting for an approval.
Everything it returns is redacted as the transcript is.
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the session's modules load with the session, after the server answers
    from agent.mcp.approvals import CallAsk
    from agent.runtime.builder import Runtime

#: the argument a client adds to a call to come back with an approval
APPROVAL_ARG = "approval_id"
#: the session's own bookkeeping, which a host agent keeps for itself
NOT_SERVED = frozenset({"todo_write", "recall_result"})

RuntimeOpener = Callable[[], AbstractAsyncContextManager["Runtime"]]


class SessionUnavailable(Exception):
    """The session cannot open (settings, inventory, webhook); `str()` says why in one line."""


@dataclass
class CallOutcome:
    """What became of a call: `status` is done, error, refused or approval_pending; `fields`
    go beside it (the tool's own data under `data`, a refusal's `reason`, or the approval)."""

    status: str
    text: str
    fields: dict[str, Any] = field(default_factory=dict)


class ScoutBridge:
    def __init__(self, opener: RuntimeOpener, principal: str):
        """`opener` opens the session (and closes it, with its approver, on exit)."""
        self.opener = opener
        self.principal = principal
        self._stack = AsyncExitStack()
        self._runtime: Runtime | None = None
        self._opening = asyncio.Lock()

    async def runtime(self) -> Runtime:
        """The session, opened on first use (a simulated cluster takes seconds to start, and
        `server/discover` must not wait for it); the opener raises SessionUnavailable."""
        async with self._opening:
            if self._runtime is None:
                self._runtime = await self._stack.enter_async_context(self.opener())
            return self._runtime

    async def aclose(self) -> None:
        if self._runtime is not None:
            self._runtime.session.end("client_left")
        await self._stack.aclose()

    async def tools(self) -> list[dict[str, Any]]:
        """The session's tool definitions, each input able to carry an approval id."""
        runtime = await self.runtime()
        served = []
        for definition in runtime.session.tools:
            if definition["name"] in NOT_SERVED:
                continue
            definition = copy.deepcopy(definition)
            schema = definition["input_schema"]
            schema.setdefault("properties", {})[APPROVAL_ARG] = {
                "type": "string",
                "description": "Only when calling again after an approval_pending answer: "
                "the id it gave. Scout's operator decides approvals, never the caller.",
            }
            served.append(definition)
        return served

    async def call(self, name: str, arguments: dict[str, Any], client: str) -> CallOutcome:
        """Run one call as the model's calls run; the approval, if any, is Scout's."""
        from agent.loop.calls import ToolCall
        from agent.loop.events import ClientCall
        from agent.mcp.approvals import CURRENT_CALL, CallAsk

        runtime = await self.runtime()
        if name in NOT_SERVED:
            return CallOutcome("error", f"{name} is not served over MCP.")
        arguments = dict(arguments)
        approval_id = arguments.pop(APPROVAL_ARG, None)
        if approval_id is not None and not isinstance(approval_id, str):
            return CallOutcome("error", f"{APPROVAL_ARG} must be the id string Scout gave.")
        call_id = f"mcp_{uuid.uuid4().hex[:12]}"
        runtime.session.recorder.emit(
            ClientCall(
                call_id=call_id,
                tool=name,
                client=client,
                principal=self.principal,
                approval_id=approval_id,
            )
        )
        ask = CallAsk(principal=self.principal, client=client, approval_id=approval_id)
        token = CURRENT_CALL.set(ask)
        try:
            call = ToolCall(call_id, name, arguments)
            [result] = await runtime.session.run_operator_calls([call])
        finally:
            CURRENT_CALL.reset(token)
        redactor = runtime.session.parts.redactor
        text = redactor.text(result.text)
        if ask.pending:
            return _pending_outcome(ask, text)
        fields: dict[str, Any] = {"data": redactor.data(result.data)}
        if result.reason is not None:
            fields["reason"] = result.reason.model_dump()
        refused = result.meta.get("gated") or ask.refused
        status = "refused" if refused else "error" if result.is_error else "done"
        return CallOutcome(status, text, fields)

    async def resources(self) -> dict[str, tuple[str, str]]:
        """What Scout knows, by URI: (description, JSON text), redacted."""
        runtime = await self.runtime()
        redact = runtime.session.parts.redactor.text
        plan = runtime.state.plan
        approved = plan.approved.model_dump_json(indent=1) if plan.approved else "null"
        return {
            "scout://world": (
                "The world model: every host's facts, findings, endpoints, jobs.",
                redact(runtime.world.model_dump_json(indent=1)),
            ),
            "scout://findings": (
                "The findings alone: what blocks or risks the deployment, by host.",
                redact(_json_list([f.model_dump_json() for f in runtime.world.findings])),
            ),
            "scout://plan": ("The plan a person approved (null before one is).", redact(approved)),
        }


def _pending_outcome(ask: CallAsk, text: str) -> CallOutcome:
    """Waiting for a decision: what would run, why it asks, and how to come back."""
    pending = ask.pending[-1]
    request = pending.request
    return CallOutcome(
        "approval_pending",
        f"{text}\nWaiting for the operator: approval {request.id} ({request.tool}: "
        f"{request.summary or request.reason}). Tell the user; do not try another way.",
        {
            "approval_id": request.id,
            "tool": request.tool,
            "input": request.input,
            "hosts": request.hosts,
            "risk": request.risk,
            "why": request.reason,
            "plan_step": request.plan_step,
            "expires_at": request.expires_at,
        },
    )


def _json_list(items: list[str]) -> str:
    return "[" + ",\n".join(items) + "]"
