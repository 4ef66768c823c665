"""Warnings raised inside libraries go to Scout's log file, never over the screen; Scout's own show.

A library's warning is addressed to whoever maintains the code that called it, not to Scout's
user: cryptography 51 deprecating DSA as asyncssh 2.24 imports it printed ten lines before every
command's own output, and a test reading stderr could not tell them from Scout's words. So a
warning whose location (the `stacklevel` frame the warner chose) lies outside Scout's packages is
written to the log instead. One that lies in Scout's code (Scout's own warning, or a library
telling Scout that its call is deprecated) still reaches stderr, where a developer sees it.

Python's filters are untouched: `-W` and PYTHONWARNINGS still decide whether a warning is shown,
ignored or raised as an error; only where a shown library warning goes changes. Until a face
opens its log file (`configure_logging`) such warnings wait in memory; a face that never opens
one (policy, redact, init) drops them at exit, still off the screen.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import TextIO

# agent/, tools/ and sim/ sit side by side, in a checkout as in site-packages
_ROOT = Path(__file__).resolve().parents[2]
OWN_FOLDERS = tuple(str(_ROOT / name) + os.sep for name in ("agent", "tools", "sim"))
LOGGER_NAME = "py.warnings"  # where logging.captureWarnings would send them too
HELD_AT_MOST = 200  # a library warning repeats per call site at most; more is a loop, not news


# Library warnings shown while the root logger has no handler (before the log file opens), as
# plain text, not logging records: logging loads only when one is written, not at the start of
# every command, `scout recon` among them.
_HELD: list[str] = []


def is_scouts(filename: str) -> bool:
    """Whether a warning's location is in Scout's own packages."""
    try:
        where = os.path.realpath(filename)
    except (TypeError, ValueError):
        return False
    return where.startswith(OWN_FOLDERS)


def route_library_warnings() -> None:
    """Send library warnings to the log from now on; call first, before any library is imported."""
    shown = warnings.showwarning
    if getattr(shown, "routes_library_warnings", False):
        return

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if file is not None or is_scouts(filename):
            shown(message, category, filename, lineno, file, line)
            return
        if len(_HELD) < HELD_AT_MOST:
            _HELD.append(warnings.formatwarning(message, category, filename, lineno, line).strip())
        release_held_warnings()

    show.routes_library_warnings = True  # type: ignore[attr-defined]
    warnings.showwarning = show


def release_held_warnings() -> None:
    """Write what is held through the root logger's handlers (the log file), where it has any;
    else keep holding it: never logging's last-resort stderr. Called at each library warning
    and once a face has configured its log file."""
    if not _HELD:
        return
    import logging

    root = logging.getLogger()
    if not root.handlers:
        return
    held = _HELD[:]
    _HELD.clear()
    for text in held:
        record = logging.getLogger(LOGGER_NAME).makeRecord(
            LOGGER_NAME, logging.WARNING, "", 0, "library warning: %s", (text,), None
        )
        root.handle(record)
