"""Expected failures said plainly: what happened and what to do, never a traceback.

`scout` catches these around every command. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.runtime.settings import Settings

EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell expects from a program stopped by Ctrl-C

_WRITE_HINT = "check its permissions, or point SCOUT_HOME to a folder you can write"
_HINTS = {
    errno.EACCES: _WRITE_HINT,
    errno.EPERM: _WRITE_HINT,
    errno.EROFS: "that file system is read-only; point SCOUT_HOME to a folder you can write",
    errno.ENOSPC: "free some space on the disk",
    errno.EDQUOT: "your disk quota is used up; free some space on the disk",
    errno.ENOTDIR: "a part of that path is a file, not a folder",
    errno.EEXIST: "something else is already there",
    errno.ENOENT: "check the path",
}


_FULL = (errno.ENOSPC, errno.EDQUOT)  # a disk that is full: name the folder to clear


def explain(exc: BaseException) -> str | None:
    """The message for an expected failure, or None for one that is a bug."""
    from agent.runtime.settings import SettingsError
    from sim.scenario import ScenarioError
    from tools.ssh.errors import SSHError

    if isinstance(exc, SSHError | SettingsError | ScenarioError):
        return str(exc)
    if isinstance(exc, OSError):
        return describe_os_error(exc)
    return None


def describe_os_error(exc: OSError, target: str | None = None) -> str:
    """`cannot use /x/y: permission denied; check …` from an OSError."""
    where = target or (str(exc.filename) if exc.filename else "a file")
    reason = (exc.strerror or str(exc)).lower()
    hint = _HINTS.get(exc.errno or 0, "check the path and try again")
    if exc.errno in _FULL and exc.filename:
        hint = f"{hint} that holds {Path(exc.filename).parent}"
    return f"cannot use {where}: {reason}; {hint}"


def reader_gone() -> int:
    """stdout's reader left (`scout … | head -1`): stop quietly, as a pipeline expects, with the
    status rich gives its faces in the same case (1). stdout then points at /dev/null, so
    nothing still buffered fails again at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 1


def writable_folder(folder: Path, what: str) -> str | None:
    """Create `folder` if needed; None when Scout can write there, else what to tell the user."""
    if folder.exists() and not folder.is_dir():
        return f"{what} {folder} is a file, not a folder; choose a folder"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".scout-write-check"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        return describe_os_error(exc, f"{what} {folder}")
    return None


def inventory_problem(settings: Settings) -> str | None:
    """Read the settings' inventory up front, so a bad file is one clear line, not a traceback."""
    from tools.ssh import Inventory, SSHError

    if settings.inventory is None:
        return None
    try:
        Inventory.load(settings.inventory)
    except SSHError as exc:
        return str(exc)
    return None


def transcripts_problem(settings: Settings) -> str | None:
    return writable_folder(settings.transcripts_dir, "the transcripts folder")
