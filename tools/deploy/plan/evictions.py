"""A plan that would end a deployment Scout recorded says so in its risks.

Records are one per deployment (agent/runtime/deployment_record.py). A new plan that stops,
removes or re-creates a container a record names on its host, or serves on a recorded endpoint,
takes that deployment down; the person approving the plan must read it there, not find out from
`scout status` afterwards. The runtime lends the records (`Recorded`) to plan_deployment; tools
never read agent's files themselves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from tools.deploy.steps import DeployStep


@dataclass(frozen=True)
class Recorded:
    """A recorded deployment as a plan can collide with it: its endpoint and containers."""

    id: str
    model: str
    host: str
    port: int
    containers: tuple[tuple[str, str], ...]  # (host, container name)


def eviction_risks(steps: Iterable[DeployStep], recorded: Iterable[Recorded]) -> list[str]:
    """One risk line for each recorded deployment a step of the plan would take down."""
    steps = list(steps)
    lines = []
    for record in recorded:
        why = _collision(steps, record)
        if why is not None:
            lines.append(
                f"evicts the recorded deployment {record.id} ({record.model} at "
                f"{record.host}:{record.port}): {why}; `scout status` shows it"
            )
    return lines


def _collision(steps: list[DeployStep], record: Recorded) -> str | None:
    serves_there = re.compile(rf"--port[= ]{record.port}(?!\d)")
    for step in steps:
        for host, name in record.containers:
            named = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])")
            if step.host == host and any(named.search(action) for action in step.actions):
                return f"step '{step.title}' on {host} acts on its container {name}"
        if step.host == record.host and any(serves_there.search(a) for a in step.actions):
            return f"step '{step.title}' serves on its endpoint {record.host}:{record.port}"
    return None
