"""Re-driving an MCP session (agent/mcp/): its client's calls, in order, on a fresh simulator.

An MCP session has no model turns to replay: what drove it is the calls its client sent, each
recorded as a `client_call` event before the call's own events. Each runs again, with its
recorded id and input, through a fresh session's gate; approvals are answered from the
recording for that call and fingerprint alone (RecordedApprover), so a pending answer stays
pending and nothing runs that was not approved for exactly that call. A call whose outcome
differs from the recording (it failed where it had worked, or the other way) is drift, and an
approval the recording cannot answer stops the replay there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent.loop.calls import ToolCall
from agent.loop.events import ClientCall, Event, SessionStart, ToolCallEvent, ToolResultEvent
from agent.loop.model_turn import NoModel
from agent.loop.recorder import SessionListener
from agent.replay.recorded_approvals import RecordedApprover
from agent.replay.redrive import sim_runtime
from agent.safety.modes import MODES


@dataclass
class ClientReplay:
    calls_played: int
    calls_recorded: int
    drift: list[str] = field(default_factory=list)
    results: list[ToolResultEvent] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.drift and self.calls_played == self.calls_recorded

    def describe(self) -> str:
        if self.clean:
            return f"no drift: {self.calls_played} client calls replayed as recorded"
        lines = [f"replayed {self.calls_played} of {self.calls_recorded} recorded client calls"]
        return "\n".join([*lines, *(f"drift: {problem}" for problem in self.drift)])


def is_client_session(events: list[Event]) -> bool:
    """A session an MCP client drove (its calls, not a model's turns)."""
    return any(isinstance(event, ClientCall) for event in events)


async def redrive_client_calls(
    events: list[Event],
    scenario: str,
    *,
    listeners: list[SessionListener] | None = None,
    transcript_path: Path | None = None,
) -> ClientReplay:
    inputs = {e.id: e.input for e in events if isinstance(e, ToolCallEvent)}
    outcomes = {e.id: e.is_error for e in events if isinstance(e, ToolResultEvent)}
    calls = [e for e in events if isinstance(e, ClientCall) and e.call_id in inputs]
    start = next((e for e in events if isinstance(e, SessionStart)), None)
    mode = start.mode if start is not None and start.mode in MODES else "ask"
    answers = RecordedApprover(events)
    replay = ClientReplay(calls_played=0, calls_recorded=len(calls))
    async with sim_runtime(
        scenario,
        client=NoModel("a replayed MCP session"),
        approver_factory=lambda rules: answers,
        model=start.model if start is not None else "mcp-client",
        mode=mode,  # type: ignore[arg-type]
        listeners=listeners,
        transcript_path=transcript_path,
    ) as runtime:
        for recorded in calls:
            runtime.session.recorder.emit(recorded)  # stamped anew by this session
            call = ToolCall(recorded.call_id, recorded.tool, inputs[recorded.call_id])
            [result] = await runtime.session.run_operator_calls([call])
            replay.calls_played += 1
            replay.results.append(
                ToolResultEvent(
                    id=call.id, name=call.name, text=result.text, is_error=result.is_error
                )
            )
            if answers.halt_reason() is not None:
                replay.drift += answers.drift
                break
            if result.is_error != outcomes.get(call.id, result.is_error):
                was = "failed" if outcomes[call.id] else "worked"
                replay.drift.append(f"{call.name} ({call.id}) {was} when recorded, not now")
        runtime.session.end("replayed")
    return replay
