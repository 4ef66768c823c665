"""`rsync --info=progress2` (whole transfer) and `-P`/`--progress` (per file).

The progress line (`  5,268,953,088 100%   87.36MB/s    0:00:57 (xfr#1, to-chk=0/1)`) is
rewritten with \\r while it runs; `-h` prints `737.82M`; rsync 2.6.9 says `xfer#N, to-check=M/T`
(tests/fixtures/jobs/rsync_*). The time is what is left while copying and the time taken once
at 100%. `sent … bytes  received … bytes` and `total size is …` end a run; `rsync error: …` and
`rsync: …` report failures, after ssh's own line when the peer cannot be reached.
"""

from __future__ import annotations

import re

from tools.jobs.progress.lines import said_lines, segments
from tools.jobs.progress.model import Progress, clock_seconds, size_bytes
from tools.jobs.progress.tqdm import human_bytes

KIND = "rsync"
_PROGRESS = re.compile(
    r"^\s*(?P<bytes>[\d,.]+[KMGT]?)\s+(?P<pct>\d+)%\s+(?P<rate>[\d.]+[kKMGT]?B/s)\s+"
    r"(?P<time>\d+:\d\d:\d\d)(?:\s+\((?:xfr|xfer)#(?P<xfr>\d+),\s*"
    r"(?:to-chk|ir-chk|to-check)=(?P<left>\d+)/(?P<total>\d+)\))?"
)
_SUMMARY = re.compile(r"^total size is (?P<size>[\d,.]+[KMGT]?)\s+speedup is")
_FAILED = re.compile(r"^(?:rsync(?: error)?|ssh): ")


def read_rsync(tail: str, milestones: str) -> Progress:
    latest = None
    for piece in segments(tail):
        match = _PROGRESS.match(piece)
        if match:
            latest = match
    lines = said_lines(milestones + "\n" + tail)
    summary = next((m for line in lines if (m := _SUMMARY.match(line.strip()))), None)
    said = said_lines(tail) + lines  # the tail holds the cause (ssh's line) before rsync's
    error = next((line.strip() for line in said if _FAILED.match(line.strip())), None)
    facts: dict[str, object] = {}
    parts = []
    fraction = None
    if latest is not None:
        copied, pct = size_bytes(latest["bytes"]) or 0, int(latest["pct"])
        facts.update(bytes_done=copied, percent=pct, rate=latest["rate"])
        fraction = pct / 100
        parts.append(f"{human_bytes(copied)} ({pct}%) at {latest['rate']}")
        seconds = clock_seconds(latest["time"]) or 0
        if pct < 100:
            facts["eta_s"] = seconds
            parts.append(f"ETA {latest['time']}")
        if latest["total"]:
            left, total = int(latest["left"]), int(latest["total"])
            facts.update(files_checked=total - left, files_total=total)
            parts.append(f"files {total - left}/{total} checked")
    if summary is not None:
        facts["total_bytes"] = size_bytes(summary["size"])
        parts.append(f"finished: total size {summary['size']}")
        fraction = 1.0
    return Progress(
        KIND,
        ", ".join(parts) or "started, no progress line yet",
        fraction,
        ready=summary is not None,
        error=error,
        facts=facts,
    )
