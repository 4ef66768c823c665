"""The log's own error line: what a failed job said about why, in its words."""

from __future__ import annotations

import re
from collections.abc import Iterable

from tools.jobs.progress.lines import message

# `ValueError: …`, `torch.OutOfMemoryError: …`, `huggingface_hub.errors.GatedRepoError: …`
_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b:?")
# `Error response from daemon: …`, `error getting credentials - …`, `rsync error: …`, `Error: …`
_ERROR_WORD = re.compile(r"^(?:[\w-]+:? )?(?:error|ERROR|Error)\b[ :]")
_NOT_ERRORS = re.compile(r"can be ignored|error_on_|errors=|Error-free", re.I)
_MAYBE = re.compile(r"rror|xception|Exit|Interrupt")  # cheap test before the real ones


def may_hold_error(text: str) -> bool:
    """False when no line of `text` can be an error line: one search instead of one a line."""
    return _MAYBE.search(text) is not None


def first_error(lines: Iterable[str]) -> str | None:
    """The first exception line (`ValueError: …`) in the log, else its first `error: …` line."""
    worded = None
    for line in lines:
        if not _MAYBE.search(line):
            continue
        text = message(line).strip()
        if not text or _NOT_ERRORS.search(text):
            continue
        if _EXCEPTION.match(text):
            return text
        if worded is None and _ERROR_WORD.match(text):
            worded = text
    return worded
