"""Warnings raised inside libraries go to Scout's log file, never over the screen; Scout's own show.

A library's warning is addressed to whoever maintains the code that called it, not to Scout's
user: cryptography 51 deprecating DSA as asyncssh 2.24 imports it printed ten lines before every
command's own output, and a test reading stderr could not tell them from Scout's words. So only
Scout's own warning reaches stderr, where a developer sees it: one raised by Scout's code (the
code that called `warnings.warn` is in Scout's packages) at a location in Scout's code. Every
other is written to the log instead. The location alone cannot tell: a library that warns as it
loads with `stacklevel=2`, as deprecations usually do, points at the line of Scout that imported
it, and one deprecating a call points at Scout's call; both are the library's words.

Python's filters are untouched: `-W` and PYTHONWARNINGS still decide whether a warning is shown,
ignored or raised as an error; only where a shown library warning goes changes. Until a face
opens its log file (`configure_logging`) such warnings wait in memory; a face that never opens
one (policy, redact, init) drops them at exit, still off the screen.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from types import FrameType
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
    """Whether a warning's location (or a frame's file) is in Scout's own packages."""
    try:
        where = os.path.realpath(filename)
    except (TypeError, ValueError):
        return False
    return where.startswith(OWN_FOLDERS)


def raiser_file(frame: FrameType | None) -> str:
    """The file of the code that raised a warning, from the frame that called the show hook:
    the first frame up from it that is not the warnings machinery nor the import system (whose
    frames Python skips when it counts a `stacklevel`, too). A warning raised from C code (an
    extension module, the compiler) is the Python code that was running it."""
    while frame is not None and _machinery(frame.f_globals.get("__name__")):
        frame = frame.f_back
    return frame.f_code.co_filename if frame is not None else ""


def _machinery(module: object) -> bool:
    """By the frame's module, not its file: a relocated Python's files are not where its
    compiled code says they were."""
    return module == "warnings" or (isinstance(module, str) and module.startswith("importlib._"))


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
        if file is not None or (is_scouts(filename) and is_scouts(raiser_file(sys._getframe(1)))):
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
