"""Telling "the tool is not there / not allowed" apart from output worth parsing."""

from __future__ import annotations

import re

COMMAND_NOT_FOUND_STATUS = 127
_MISSING_PATTERNS = re.compile(
    r"command not found|not found in PATH|not in PATH|No such file or directory|Permission denied"
    r"|Operation not permitted|executable file not found",
    re.IGNORECASE,
)


def is_tool_missing(text: str, exit_status: int | None) -> bool:
    """True when a probe failed because the tool (or file) is absent or not permitted.

    Such a result is a fact about the host (e.g. `nvcc` not in PATH, no `/etc/dgx-release`),
    not something to parse.
    """
    if exit_status == COMMAND_NOT_FOUND_STATUS:
        return True
    return bool(_MISSING_PATTERNS.search(text))
