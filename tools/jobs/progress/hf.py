"""`hf download` / `huggingface-cli download`: files fetched, bytes, rate and time left.

Read as the captures show it (tests/fixtures/jobs/hf_download_*): tqdm bars (`Fetching 17
files: 100%|##########| 17/17`, `file.gguf: 100%|███| 4.92G/4.92G [00:04<00:00, 212MB/s]`,
`Downloading (incomplete total...): 0.00B [00:00, ?B/s]`), the verbose per-file lines
(`Downloading 'x' to '….incomplete'`, `Download complete. Moving file to …`) and, at the end,
the local path the CLI prints.
"""

from __future__ import annotations

import re

from tools.jobs.progress.errors import first_error
from tools.jobs.progress.lines import screen_lines, segments
from tools.jobs.progress.model import Progress, percent
from tools.jobs.progress.tqdm import bars, clock, human_bytes

KIND = "hf_download"
_STARTED = re.compile(r"Downloading '(?P<file>[^']+)' to '")
_FINISHED = re.compile(r"Download complete\. Moving file to (?P<path>\S+)")
_LOCAL_PATH = re.compile(r"^/\S+$")


def read_hf_download(tail: str, milestones: str) -> Progress:
    states = bars(segments(tail))
    files = next((b for b in reversed(states) if b.desc.startswith("Fetching")), None)
    transfer = next(
        (b for b in reversed(states) if b.counts_bytes and not b.desc.startswith("Fetching")), None
    )
    lines = screen_lines(milestones + "\n" + tail)
    pieces = list(segments(milestones + "\n" + tail))
    started = {m["file"] for piece in pieces for m in _STARTED.finditer(piece)}
    finished = {m["path"] for piece in pieces for m in _FINISHED.finditer(piece)}
    facts: dict[str, object] = {}
    parts = []
    if files is not None:
        facts.update(files_done=int(files.done), files_total=int(files.total or 0))
        parts.append(f"{int(files.done)}/{int(files.total or 0)} files")
    elif started:
        facts.update(files_done=len(finished), files_started=len(started))
        parts.append(f"{len(finished)}/{len(started)} files started are done")
    fraction = percent(files.done, files.total) if files and files.total else None
    if transfer is not None:
        whole = files is None or transfer.desc.startswith(("Downloading", "Download complete"))
        facts.update(bytes_done=int(transfer.done), rate=transfer.rate)
        size = human_bytes(transfer.done)
        if transfer.total:
            share = percent(transfer.done, transfer.total)
            size += f"/{human_bytes(transfer.total)} ({round(100 * (share or 0))}%)"
            if whole:
                facts["bytes_total"] = int(transfer.total)
                fraction = share
        parts.append(size if whole else f"current file {size}")
        if transfer.total is None:
            parts[-1] += " downloaded"
        if not transfer.rate.startswith("?"):
            parts.append(transfer.rate)
        if transfer.remaining_s is not None and transfer.total and transfer.done < transfer.total:
            facts["eta_s"] = transfer.remaining_s
            parts.append(f"ETA {clock(transfer.remaining_s)}")
    done_path = _local_path(lines)
    complete = done_path is not None or any(b.desc.startswith("Download complete") for b in states)
    if done_path:
        facts["path"] = done_path
        parts.append(f"downloaded to {done_path}")
    if complete:
        fraction = 1.0
    error = first_error(lines)
    return Progress(
        KIND,
        ", ".join(parts) or "started, no progress printed yet",
        fraction,
        ready=complete,
        error=error,
        facts=facts,
    )


def _local_path(lines: list[str]) -> str | None:
    """The path the CLI prints when it is done (its last line)."""
    if lines and _LOCAL_PATH.match(lines[-1].strip()) and "/" in lines[-1][1:]:
        return lines[-1].strip()
    return None
