"""What Scout created with a shell command: the world model hears of it as Scout's own work.

A plan step that creates a container, and a docker_ctl run, tell the world model themselves
(tools/world/store.py:record_created). A container started by a command (`ssh_exec` running
`docker run --name …`, or the approver's edit of it) is found here: once the call's result says
the command exited 0 on a host, each container it named (agent/safety/shell/creates.py) is
recorded for that host. A command that failed there may have met someone else's container of
that name: nothing is recorded, so that container stays a finding.
"""

from __future__ import annotations

from typing import Any

from agent.loop.events import ApprovalDecisionEvent, Event, ToolCallEvent, ToolResultEvent
from agent.loop.recorder import SessionListener
from agent.safety.shell.creates import containers_created
from agent.world.model import WorldModel

SHELL_TOOLS = frozenset({"ssh_exec"})


class OwnWork(SessionListener):
    def __init__(self, world: WorldModel) -> None:
        self.world = world
        self._shell: set[str] = set()  # ids of the session's shell calls
        self._calls: dict[str, tuple[str, list[str]]] = {}  # call id -> (command, names)

    def on_event(self, event: Event) -> None:
        if isinstance(event, ToolCallEvent) and event.name in SHELL_TOOLS:
            self._shell.add(event.id)
            self._follow(event.id, event.input)
        elif isinstance(event, ApprovalDecisionEvent) and event.call_id in self._shell:
            if event.edited_input is not None:  # what runs is the approver's edit
                self._follow(event.call_id, event.edited_input)
        elif isinstance(event, ToolResultEvent) and event.id in self._shell:
            self._shell.discard(event.id)
            command, names = self._calls.pop(event.id, ("", []))
            for host in _exited_zero(event):
                for name in names:
                    self.world.record_created(host, name, f"{event.name}: {command[:120]}")

    def _follow(self, call_id: str, call_input: dict[str, Any]) -> None:
        command = _command(call_input)
        names = containers_created(command) if command else []
        self._calls[call_id] = (command, names)


def _command(call_input: dict[str, Any]) -> str:
    command = call_input.get("command")
    return command if isinstance(command, str) else ""


def _exited_zero(event: ToolResultEvent) -> list[str]:
    """The hosts where the call's command exited 0."""
    per_host: Any = event.data.get("hosts")
    if not isinstance(per_host, dict):
        return []
    return [h for h, r in per_host.items() if isinstance(r, dict) and r.get("exit_status") == 0]
