"""What a session resumes from: its conversation, todo list, state and calls, from a transcript.

agent/runtime/resume.py reads a transcript into this; the builder (agent/runtime/builder.py)
starts the new session from it. It lives here, beside the session, so the builder needs nothing
from the replay room.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.loop.compaction import CallLedger
from tools.deploy.rollout.state import StateChange


@dataclass
class KnownJob:
    """A job the session started or saw, with the state the transcript last recorded."""

    host: str
    name: str
    command: str = ""
    state: str = "running"


@dataclass
class GrantedCall:
    """A call that ran on a step approved with the plan, so the resumed grant can be used up
    as it was; `ok` is None when the call never finished."""

    call_id: str
    name: str
    input: dict[str, Any]
    ok: bool | None = None


@dataclass
class RebuiltSession:
    session_id: str
    model: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    todo_items: list[dict[str, Any]] = field(default_factory=list)
    interrupted_calls: list[str] = field(default_factory=list)
    granted_calls: list[GrantedCall] = field(default_factory=list)  # in the order they ran
    state_changes: list[StateChange] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # recorded state not taken back, and why
    ledger: CallLedger = field(default_factory=CallLedger)  # every call, for stubs and recall
    last_seq: int = 0
    problems: list[str] = field(default_factory=list)  # parts of the transcript left out
    jobs: dict[str, KnownJob] = field(default_factory=dict)  # by "host/name", to find again
    hosts: dict[str, str] | None = None  # where it ran (SessionStart.hosts); None: not recorded
    scenario: str | None = None  # the simulator's scenario it ran on, if any
