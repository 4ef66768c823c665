"""The log's own error line, found by one grammar for every job kind (DESIGN rule 12).

A line is read after its launchers' prefixes are peeled off (prefixes.py). It is an error when a
prefix said so (`ERROR`, `E0217 …`, `Scheduler hit an exception:`), when it is an exception line
(`ValueError: …`, `torch.OutOfMemoryError: …`, `ray.exceptions.RayTaskError(ValueError): …`),
when it opens with an error word in any case (`error`, `fatal`, `panic`, `failed to`, `failure`,
`exception`, also behind the tool's own name: `rsync error: …`, `docker: Error response …`), when
a GPU library reports a failure anywhere in it (`Test NCCL failure …`, `CUDA error: …`), when the
kernel's words say so (`no space left on device`, `Killed`), or when it reports a non-zero exit
status. A line a prefix called INFO or WARNING is no error unless it is an exception line.

A line that says the fabric or a resource failed (meanings.py: an NCCL transport warning, any
engine's out-of-memory words) is an error at whatever level it was printed. Lines are read as a
person would: a command continued with a backslash and a line a terminal hard-wrapped are
re-joined first (lines.py).

Of all such lines the most specific is reported: an exception line (the end of a traceback, not
its first frame) over a worded error line, over a traceback's first line or an exit status;
among equals the first, which is the cause where later ones are its echoes. When that line says
nothing of why (`Failed to deserialize cuda engine`) and another says the fabric or memory
failed, that one is kept as its cause: the root cause is what the next decision needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tools.jobs.progress.lines import rejoined
from tools.jobs.progress.meanings import meaning
from tools.jobs.progress.prefixes import Said, peel

EXCEPTION_LINE = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure|Exit|Interrupt|Fault)"
    r"(?:\([\w.]+\))?(?::\s|:?$)"
)
_WORDED = re.compile(
    r"^(?:[\w./-]+:\s*)?(?:\(\d+\)\s*)?(?:error|fatal|panic|failed to|failure|exception)\b", re.I
)
_ANYWHERE = re.compile(
    r"\b(?:nccl|cuda|cudnn|cublas|nvml|mpi|gloo)\s+(?:\w+\s+)?(?:error|failure)\b|"
    r"\bfailed to\b|\bfatal error\b|no space left on device|cannot allocate memory|"
    r"^(?:Segmentation fault|Killed|Aborted|Bus error)\b|\(core dumped\)",
    re.I,
)
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\)")
_EXIT_STATUS = re.compile(
    r"\b(?:exit(?:ed)?(?: with)?(?: status| code)|returned non-zero exit status|exit code)"
    r"[:= ]\s*(?!0\b)-?\d+|\*\*\* .*\bError [1-9]\d*",  # and make's `*** [all] Error 2`
    re.I,
)
# a traceback's frames, its code lines that raise, its markers and joints
_FRAME = re.compile(r'^(?:File "|raise \w|\^+$|~+\^*~*$|During handling of|The above exception)')
_NOT_ERRORS = re.compile(
    r"can be ignored|error_on_|errors?=|error-free|\b0 errors?\b|\bno errors?\b|"
    r"ignore[_-]errors|without errors?",
    re.I,
)
_MAYBE = re.compile(
    r"rror|xception|fatal|fail|traceback|exit|interrupt|killed|abort|panic|fault|no space|"
    r"cannot allocate|CRITICAL|(?:^|[\s\[:])[EF]\d{4} |\s[EF] \d+ \d+\]|"
    r"NCCL WARN|NET/|ibv_|UCX|gloo|watchdog|timeout|timed out|OOM|OutOfMemory|No available memory|"
    r"exceeded|vendor err",
    re.I,
)
EXCEPTION, WORDED, OPENING = 3, 2, 1


def may_hold_error(text: str) -> bool:
    """False when no line of `text` can be an error line: one search instead of one a line."""
    return _MAYBE.search(text) is not None


def error_rank(said: Said) -> int:
    """How specific an error line this is: EXCEPTION, WORDED, OPENING, or 0 (no error)."""
    text = said.text
    if not text or _FRAME.match(text) or _NOT_ERRORS.search(text):
        return 0
    if EXCEPTION_LINE.match(text):
        return EXCEPTION
    if _TRACEBACK.match(text):
        return OPENING
    if meaning(text) is not None:
        return WORDED
    if said.quiet:
        return 0
    if said.loud or _WORDED.match(text) or _ANYWHERE.search(text):
        return WORDED
    return OPENING if _EXIT_STATUS.search(text) else 0


def first_error(lines: Iterable[str]) -> str | None:
    """The most specific error line of the log, in its own words (without its prefixes), with
    the line that says the fabric or memory failed as its cause when it says nothing of why."""
    best, best_rank, cause = None, 0, None
    for line in rejoined(list(lines)):
        if not _MAYBE.search(line):
            continue
        said = peel(line)
        rank = error_rank(said)
        if rank and cause is None and meaning(said.text) is not None:
            cause = said.text.strip()
        if rank > best_rank:
            best, best_rank = said.text.strip(), rank
    if best is not None and cause is not None and meaning(best) is None:
        return f"{best} (cause: {cause})"
    return best
