"""Who said a log line, and how loudly: the prefixes launchers put before a message, peeled off.

Real logs reach a job's file through layers that each add their own head: Docker Compose
(`vllm-head-1  | `), torchrun and mpirun (`[rank0]: `, `[1,0]<stderr>:`), Ray (`(RayWorkerWrapper
pid=383, ip=…) `, `[2025-02-16 18:29:17,459 W 1 1] `), BuildKit (`#51 0.871 `), glog
(`W0217 10:00:00.123 12 file.cc:9] `), timestamps in every form, log levels (`ERROR 04-12
10:00:00 [core.py:390] `, `INFO:     `, `[    INFO]:`), and a process saying it failed before the
traceback it prints (SGLang's `Scheduler hit an exception: `). `peel` takes them off in any order
and keeps the loudest level it saw, so the error grammar (errors.py) reads the message alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_DEDUP_SUFFIX = re.compile(r"\s*\[repeated \d+x across cluster\].*$")
_LEVELS = r"INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|SUCC|NOTICE|TRACE"
_ERROR_LEVELS = {"ERROR", "CRITICAL", "FATAL", "E", "F"}
_STAMP = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
_GLOG = r"(?P<glog>[IWEF])\d{3,4} \d\d:\d\d:\d\d(?:\.\d+)?(?:\s+\d+)?(?:\s+[\w./-]+:\d+)?"

# Each matches at the start of what is left; `level` or `glog`, when present, is a log level.
HEADS = tuple(
    re.compile(pattern)
    for pattern in (
        r"^[\w.-]+(?:[-_]\d+\s+|\s{2,})\|\s?",  # compose service prefix (`vllm-1  | `)
        r"^\[[\w.-]+:\d+:\d+:\d+\]\s*",  # UCX's [host:pid:tid:thread]
        r"^\[(?:rank\d+|\d+,\d+)\](?:<std(?:out|err)>)?:\s*",  # torchrun / mpirun rank tags
        # Ray's and vLLM's process tags: `(RayWorkerWrapper pid=383, ip=…)`, `(VllmWorker rank=3 …)`
        r"^\((?:[\w-]+(?: rank=\d+)?(?: pid=\d+)?|pid=\d+)(?:, ip=[\w.:-]+)?(?: \+[\w.]+)?\)\s*",
        r"^\[pod/[^\]]+\]\s*",  # kubectl logs --prefix
        r"^\[(?:(?:TP|DP|PP|EP)\d+\s*)+\]\s*",  # SGLang's rank tags alone
        r"^[\w.-]+:\d+:\d+ \[\d+\]\s*",  # NCCL's host:pid:tid [gpu]
        r"^NCCL (?P<level>INFO)\b\s*",  # NCCL's INFO (its WARN lines report errors)
        r"^\[[A-Za-z][\w.-]*\](?=\[)",  # a library's tag before its level: [TensorRT-LLM][ERROR]
        r"^#\d+ \d+\.\d+\s+",  # BuildKit step and seconds
        rf"^\[?{_STAMP}(?:\s+(?:TP|DP|PP|EP)\d+)*(?:\s+(?P<level>[IWEF])\s+\d+\s+\d+)?\]?\s*",
        rf"^\[{_GLOG}\]\s*",
        rf"^{_GLOG}\]\s*",
        # vLLM's date after its level (or after what a paste left of it: `NING 04-01 …`)
        rf"^(?:(?!(?:{_LEVELS}) )[A-Z]{{1,8}} )?\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+",
        r"^\[[\w./-]+:\d+\]\s*",  # vLLM's [file.py:12]
        r"^[\w./-]+\.(?:py|c|cc|cpp|cu|h|go|rs):\d+\]?:?\s+(?:--\s+)?",  # Ray's scripts.py:1047 --
        r"^-?\s*[\w.]+\s+-\s+(?=(?:" + _LEVELS + r")\s+-\s)",  # logging's `name - LEVEL - `
        rf"^\[\s*(?P<level>{_LEVELS})\s*\]:?\s*",
        rf"^(?P<level>{_LEVELS})(?::\s*|\s+-\s+|\s+(?=\S))",
        r"^[\w ]{0,40}?\bhit an exception:\s*(?P<level>)",  # SGLang's scheduler, an error
    )
)


# Whether any head matches at all: one pass of the regex engine instead of a Python loop over
# every head, for the many lines that carry none (`step 41`, a progress bar). The heads' groups
# are made plain, as one pattern may not name a group twice.
ANY_HEAD = re.compile(
    "|".join(
        "(?:" + re.sub(r"\(\?P<\w+>", "(?:", head.pattern.removeprefix("^")) + ")" for head in HEADS
    )
)


@dataclass(frozen=True)
class Said:
    """A log line's message and whether a prefix called it an error (`loud`) or a lesser level
    (`quiet`: INFO, WARNING, DEBUG …); neither when no level was printed."""

    text: str
    loud: bool = False
    quiet: bool = False


@lru_cache(maxsize=2048)
def peel(line: str) -> Said:
    """The message of one log line, without who printed it, when, and at what level.

    Kept for the lines seen last: a status poll reads each line of a tail three times (which
    tool spoke, the error grammar, a stuck wait), and the next poll of the job most of them
    again; peeling was most of what reading a poll cost Scout (bench/jobs.py)."""
    text = _ANSI.sub("", line).strip()
    loud = quiet = False
    for _ in range(12):  # a line carries a few layers; stop when none is left
        if ANY_HEAD.match(text) is None:
            break
        for head in HEADS:
            match = head.match(text)
            if match is None or not match.group(0):
                continue
            level = match.groupdict().get("level")
            level = level if level is not None else match.groupdict().get("glog")
            if level is not None:
                if level == "" or level in _ERROR_LEVELS:
                    loud = True
                else:
                    quiet = True
            text = text[match.end() :]
            break
        else:
            break
    return Said(_DEDUP_SUFFIX.sub("", text), loud, quiet and not loud)
