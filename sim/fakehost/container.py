"""The container a command runs in: its host, name, id and the environment it sees.

Shared by the code that runs commands inside containers (incontainer.py) and the engines those
commands start (ray.py, serve*.py); it imports nothing of theirs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .state import read_state


@dataclass
class Container:
    """The container a command runs in: its host, name, id and the environment it sees."""

    host_dir: Path
    name: str
    id: str
    env: dict[str, str] = field(default_factory=dict)
    args: list[str] = field(default_factory=list)  # "$@" of the `sh -c` it runs in

    def record(self) -> dict[str, Any]:
        return read_state(self.host_dir)["docker"]["containers"].get(self.name, {})

    def image(self) -> dict[str, Any]:
        """The record of the image it runs ({} when the host no longer lists it)."""
        state = read_state(self.host_dir)
        image = self.record().get("image", "")
        for img in state["docker"]["images"] + state["docker"].get("pullable", []):
            if image in (f"{img['repository']}:{img['tag']}", img["repository"], img["id"]):
                return img
        return {}

    def packages(self) -> dict[str, str]:
        """Engine packages and versions: its image's, plus what was pip-installed in it."""
        found = dict(self.image().get("tools", {}))
        return {**found, **self.record().get("installed", {})}

    def tools(self) -> set[str]:
        return set(self.packages())

    def online(self) -> bool:
        """Whether the container reaches the internet: its host does and it has a network."""
        return bool(read_state(self.host_dir).get("internet", True)) and (
            self.record().get("network") != "none"
        )


def env_of(record: dict[str, Any], extra: list[str]) -> dict[str, str]:
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root"}
    for item in [*record.get("env", []), *extra]:
        key, sep, value = item.partition("=")
        if sep:
            env[key] = value
    return env
