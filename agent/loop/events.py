"""The transcript's event types: one pydantic model per `type`, joined in a discriminated union.

Every event carries the schema version `v`, a sequence number, a UTC timestamp and the session id.
The same events feed the faces (chat panels, headless JSON lines) and the replay.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from tools.deploy.rollout.state import StateChange

SCHEMA_VERSION = 1


class EventBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    v: int = SCHEMA_VERSION
    seq: int = 0
    ts: str = ""
    session: str = ""


class SessionStart(EventBase):
    type: Literal["session_start"] = "session_start"
    model: str
    mode: str = "ask"
    tools: list[str] = Field(default_factory=list)
    goal: str | None = None
    resumed_from: str | None = None
    # The settings that shape what the model reads (compaction, the batch budget), by their
    # Settings names, so a replay edits its history exactly as the recording did.
    history: dict[str, Any] = Field(default_factory=dict)
    # Where the session ran, so a resume elsewhere is caught: each inventory host as
    # `user@address:port` (`via` its jump host), and the simulator's scenario when it ran on one.
    hosts: dict[str, str] = Field(default_factory=dict)
    scenario: str | None = None


class UserMessage(EventBase):
    type: Literal["user_message"] = "user_message"
    text: str


class ModelRequest(EventBase):
    """A digest of what was sent, not the whole prefix: enough to spot drift between runs."""

    type: Literal["model_request"] = "model_request"
    turn: int
    digest: str
    message_count: int
    last_user: list[dict[str, Any]] = Field(default_factory=list)
    compacted_results: int = 0  # tool results the history held as compaction stubs


class ModelResponse(EventBase):
    type: Literal["model_response"] = "model_response"
    turn: int
    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: dict[str, Any] = Field(default_factory=dict)
    usage_source: Literal["api", "estimate"] = "api"  # estimate: counted from the request
    model: str = ""
    request_id: str | None = None


class ToolCallEvent(EventBase):
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    input: dict[str, Any]
    risk: str | None = None
    hosts: list[str] = Field(default_factory=list)
    summary: str = ""


class ClientCall(EventBase):
    """A call another agent sent over MCP (agent/mcp/), recorded before the call's own events:
    `client` is what the client says it is (unverified), `principal` whom the server vouches
    for (on stdio, the account the server runs as), `approval_id` the approval it came back
    with."""

    type: Literal["client_call"] = "client_call"
    call_id: str
    tool: str
    client: str
    principal: str
    transport: str = "stdio"
    approval_id: str | None = None


class ApprovalRequestEvent(EventBase):
    type: Literal["approval_request"] = "approval_request"
    call_id: str
    fingerprint: str
    tool: str
    input: dict[str, Any]
    risk: str
    reason: str
    plan_step: str | None = None


class ApprovalDecisionEvent(EventBase):
    type: Literal["approval_decision"] = "approval_decision"
    call_id: str
    fingerprint: str
    decision: Literal[
        "approved", "approved_with_edit", "denied", "timed_out", "unavailable", "pending"
    ]
    message: str = ""
    edited_input: dict[str, Any] | None = None
    decided_by: str = ""
    approve_steps: bool = False


class ToolResultEvent(EventBase):
    type: Literal["tool_result"] = "tool_result"
    id: str
    name: str
    text: str
    is_error: bool = False
    data: dict[str, Any] = Field(default_factory=dict)
    meta: dict[str, Any] = Field(default_factory=dict)


class HistoryEdit(EventBase):
    """Tool results the model reads were replaced: a batch over its budget, or compaction.

    `replaced` maps tool_use ids to the text the model reads from now on (the full text stays
    in the tool_result event); a compaction also brings the new `briefing` and may fold whole
    old turns away (`folded`). Resume replays these edits, so it rebuilds exactly the messages
    the live session sent.
    """

    type: Literal["history_edit"] = "history_edit"
    reason: Literal["batch_budget", "compaction"]
    turn: int
    replaced: dict[str, str]
    briefing: str | None = None
    folded: list[str] = Field(default_factory=list)  # calls whose whole turns left the history
    chars_before: int = 0  # the history's size (its JSON) before and after the edit
    chars_after: int = 0


class TodoUpdate(EventBase):
    type: Literal["todo_update"] = "todo_update"
    items: list[dict[str, Any]]


class WorldUpdate(EventBase):
    type: Literal["world_update"] = "world_update"
    host: str | None = None
    summary: str = ""
    findings: list[dict[str, Any]] = Field(default_factory=list)


class StateChangeEvent(EventBase):
    """The session state changed: a deployment computed, a plan approved, a rollout step run."""

    type: Literal["state_change"] = "state_change"
    change: StateChange


class JobEvent(EventBase):
    """A job on a host: started, a progress sample (throttled), its end, or its state unknown
    (the host did not answer); `found` is a job first seen running by a read (a resume)."""

    type: Literal["job"] = "job"
    kind: Literal["start", "found", "progress", "end", "unknown"]
    host: str
    name: str
    state: str
    command: str = ""
    exit_code: int | None = None
    elapsed_s: int | None = None
    progress: str | None = None
    fraction: float | None = None
    tail: str = ""  # the end of the log, on `end`
    why: str | None = None  # on `unknown`: why the host could not be read


class Notice(EventBase):
    """What the user should know that is not an error: a retry, a trusted key, a budget."""

    type: Literal["notice"] = "notice"
    level: Literal["info", "warning"] = "info"
    kind: str = ""
    message: str


class ErrorEvent(EventBase):
    type: Literal["error"] = "error"
    kind: str
    message: str


class SessionEnd(EventBase):
    type: Literal["session_end"] = "session_end"
    outcome: str
    reason: str = ""
    usage: dict[str, Any] = Field(default_factory=dict)


Event = Annotated[
    SessionStart
    | UserMessage
    | ModelRequest
    | ModelResponse
    | ToolCallEvent
    | ClientCall
    | ApprovalRequestEvent
    | ApprovalDecisionEvent
    | ToolResultEvent
    | HistoryEdit
    | TodoUpdate
    | WorldUpdate
    | StateChangeEvent
    | JobEvent
    | Notice
    | ErrorEvent
    | SessionEnd,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
