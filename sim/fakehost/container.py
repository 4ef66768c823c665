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

    def tools(self) -> set[str]:
        state = read_state(self.host_dir)
        image = self.record().get("image", "")
        for img in state["docker"]["images"] + state["docker"].get("pullable", []):
            if image in (f"{img['repository']}:{img['tag']}", img["repository"], img["id"]):
                return set(img.get("tools", []))
        return set()


def container_file(ctr: Container, path: str) -> Path:
    """Where a file the container writes (`echo … > /tmp/x`) lives on the simulated host: a
    folder per container id, as the container's own writable layer is."""
    return ctr.host_dir / "containers" / f"{ctr.id}.fs" / path.lstrip("/")


def env_of(record: dict[str, Any], extra: list[str]) -> dict[str, str]:
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root"}
    for item in [*record.get("env", []), *extra]:
        key, sep, value = item.partition("=")
        if sep:
            env[key] = value
    return env
