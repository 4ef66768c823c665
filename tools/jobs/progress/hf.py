"""`hf download` / `huggingface-cli download`: files fetched, bytes, rate and time left.

Read as the captures show it (tests/fixtures/jobs/hf_download_*): tqdm bars (`Fetching 17
files: 100%|##########| 17/17`, `file.gguf: 100%|███| 4.92G/4.92G [00:04<00:00, 212MB/s]`,
`Downloading (incomplete total...): 0.00B [00:00, ?B/s]`), the verbose per-file lines
(`Downloading 'x' to '….incomplete'`, `Download complete. Moving file to …`) and, at the end,
the local path the CLI prints. huggingface_hub 1.x with Xet prints `Download complete: : … |
0.00B` and `Reconstruction complete: …` bars without a clock, `✓ Downloaded` and `  path: …`,
which later bar states may follow (…_hub1.x_xet_complete_path_line.txt); a wrapper may print its
own lines after the path (kubectl logs of an init container).
"""

from __future__ import annotations

import re

from tools.jobs.progress.lines import said_lines, segments
from tools.jobs.progress.model import Progress, percent
from tools.jobs.progress.tqdm import Bar, bars, clock, human_bytes

KIND = "hf_download"
_STARTED = re.compile(r"Downloading '(?P<file>[^']+)' to '")
_FINISHED = re.compile(r"Download complete\. Moving file to (?P<path>\S+)")
_LOCAL_PATH = re.compile(r"^(?:path:\s*)?(?P<path>/\S*/\S+|[A-Za-z]:\\\S+)$")
_DONE_MARK = re.compile(r"✓ Downloaded|^Download complete: |^Reconstruction complete: ", re.M)
_WRAPPER_DONE = re.compile(r"\bdownload\b.*\b(?:complete|completed|finished|done)\b", re.I)
_LAST_LINES = 6  # the path is among the last lines: bars and a wrapper's echo may follow it


def read_hf_download(tail: str, milestones: str) -> Progress:
    states = bars(segments(tail))
    files = next((b for b in reversed(states) if b.desc.startswith("Fetching")), None)
    transfer = _main_transfer(states)
    lines = said_lines(milestones + "\n" + tail)
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
    complete = complete or (files is not None and files.done == files.total and _xet_done(tail))
    every_file = bool(started) and len(finished) >= len(started)
    complete = complete or (every_file and _said_done(lines))
    if done_path:
        facts["path"] = done_path
        parts.append(f"downloaded to {done_path}")
    if complete:
        fraction = 1.0
    return Progress(
        KIND,
        ", ".join(parts) or "started, no progress printed yet",
        fraction,
        ready=complete,
        facts=facts,
    )


def _main_transfer(states: list[Bar]) -> Bar | None:
    """The bar of the main transfer: the whole download's when the client prints one, else the
    largest file's latest state, never the small file (a config, a tokenizer) that happened to
    print last: its 100 % says nothing of the weights still coming."""
    latest: dict[str, Bar] = {}
    for bar in states:
        if bar.counts_bytes and not bar.desc.startswith("Fetching"):
            latest.pop(bar.desc, None)
            latest[bar.desc] = bar
    if not latest:
        return None
    whole = [b for b in latest.values() if b.desc.startswith(("Downloading", "Download complete"))]
    if whole:
        return whole[-1]
    return max(reversed(latest.values()), key=lambda b: b.total or b.done)


def _local_path(lines: list[str]) -> str | None:
    """The path the CLI prints when it is done, among the log's last lines."""
    for line in reversed(lines[-_LAST_LINES:]):
        if match := _LOCAL_PATH.match(line.strip()):
            return match["path"]
    return None


def _said_done(lines: list[str]) -> bool:
    """Every file started has finished and the last line says the download is over (a
    wrapper's own line, as an init container's script prints it)."""
    last = lines[-1] if lines else ""
    return _WRAPPER_DONE.search(last) is not None and _FINISHED.search(last) is None


def _xet_done(text: str) -> bool:
    """Xet's end marks, after every file was fetched."""
    return _DONE_MARK.search(text) is not None
