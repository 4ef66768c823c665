"""A host's state file: read without locking, changed under a lock with write-temp-then-rename."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .views import write_views

STATE_FILE = "state.json"
LOCK_FILE = "state.lock"
HOST_DIR_ENV = "SCOUT_SIM_HOST_DIR"


def resolve_host_dir(default: str) -> Path:
    """The host folder: `$SCOUT_SIM_HOST_DIR` if it holds a state file, else the built-in one.

    The variable is only honoured when it points at a real simulated host, so a command cannot
    aim the tools at an arbitrary folder of the machine.
    """
    chosen = os.environ.get(HOST_DIR_ENV)
    if chosen and (Path(chosen) / STATE_FILE).is_file():
        return Path(chosen)
    return Path(default)


def read_state(host_dir: Path) -> dict[str, Any]:
    return json.loads((host_dir / STATE_FILE).read_text())


def write_state(host_dir: Path, state: dict[str, Any]) -> None:
    """Replace the state atomically (readers see the old or the new file), then its views."""
    tmp = host_dir / f".{STATE_FILE}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(state, indent=1))
    os.replace(tmp, host_dir / STATE_FILE)
    write_views(host_dir, state)


@contextmanager
def locked_state(host_dir: Path) -> Iterator[dict[str, Any]]:
    """Yield the state for changing; it is written back when the block ends without error."""
    with open(host_dir / LOCK_FILE, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            state = read_state(host_dir)
            yield state
            write_state(host_dir, state)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
