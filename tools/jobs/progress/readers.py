"""Which reader a job's log gets: by its command first, then by what the log shows."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from tools.jobs.progress.bench import read_nccl_tests, read_perftest
from tools.jobs.progress.docker_pull import read_docker_pull
from tools.jobs.progress.engine import read_engine
from tools.jobs.progress.errors import first_error, may_hold_error
from tools.jobs.progress.hf import read_hf_download
from tools.jobs.progress.lines import screen_lines
from tools.jobs.progress.model import Progress
from tools.jobs.progress.rsync import read_rsync

Reader = Callable[[str, str], Progress]

# (command pattern, log pattern, reader): the first command match wins, else the first log match
READERS: tuple[tuple[re.Pattern[str], re.Pattern[str], Reader], ...] = (
    (
        re.compile(r"\b(?:hf|huggingface-cli)\s+download\b"),
        re.compile(r"^Fetching \d+ files|^Downloading '|^Download complete", re.M),
        read_hf_download,
    ),
    (
        re.compile(r"\bdocker\s+(?:image\s+)?pull\b"),
        re.compile(r": Pulling from |^[0-9a-f]{12}: Pull", re.M),
        read_docker_pull,
    ),
    (re.compile(r"\brsync\b"), re.compile(r"\((?:xfr|xfer)#\d+"), read_rsync),
    (
        re.compile(r"\bvllm\s+serve\b|\bsglang\.launch_server\b"),
        re.compile(r"checkpoint shards|Application startup complete|fired up and ready"),
        read_engine,
    ),
    (re.compile(r"\b\w+_perf\b"), re.compile(r"^# nccl-tests version", re.M), read_nccl_tests),
    (re.compile(r"\bib_(?:write|read|send)_(?:bw|lat)\b"), re.compile(r"BW Test"), read_perftest),
)


@lru_cache(maxsize=512)
def reader_for_command(command: str) -> Reader | None:
    """The reader the command names (every poll asks again about the same few commands)."""
    return next((reader for pattern, _log, reader in READERS if pattern.search(command)), None)


def read_progress(command: str, tail: str, milestones: str = "") -> Progress:
    """Progress of a job from the end of its log (and its milestone lines, when fetched)."""
    named = reader_for_command(command)
    if named is not None:
        return named(tail, milestones)
    for _command, pattern, reader in READERS:
        if pattern.search(tail) or pattern.search(milestones):
            return reader(tail, milestones)
    lines = screen_lines(tail)
    return Progress(
        "output",
        lines[-1].strip()[:200] if lines else "no output yet",
        error=first_error(lines) if may_hold_error(tail) else None,
    )
