"""Which reader a job's log gets, and what every reader shares.

The reader is picked by the job's command first (unless a later step of the command, one that
names no reader, spoke after it: `docker pull X && docker run X`); otherwise by what the log
shows, and where it shows several tools (`docker run` pulling its image, then the engine
starting inside it) by the one that spoke last: a finished pull followed by an engine's lines
is an engine starting, with the image it pulled among its facts. Each reader reads only what is
specific to its tool; the error line (errors.py), a warning that the job cannot finish
(meanings.py: it "will not finish", whatever its bars say) and a wait that will not end
(stuck.py) are read here for all of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

from tools.jobs.progress.bench import read_nccl_tests, read_perftest
from tools.jobs.progress.docker_build import read_docker_build
from tools.jobs.progress.docker_pull import pulled_image, read_docker_pull
from tools.jobs.progress.engine import read_engine
from tools.jobs.progress.errors import first_error, may_hold_error
from tools.jobs.progress.hf import read_hf_download
from tools.jobs.progress.lines import message, said_lines, screen_lines
from tools.jobs.progress.meanings import cannot_finish
from tools.jobs.progress.model import Progress
from tools.jobs.progress.rsync import read_rsync
from tools.jobs.progress.stuck import waiting_on

Reader = Callable[[str, str], Progress]

# (command pattern, log pattern, reader): the first command match wins, else the latest log match
READERS: tuple[tuple[re.Pattern[str], re.Pattern[str], Reader], ...] = (
    (
        re.compile(r"\b(?:hf|huggingface-cli)\s+download\b"),
        re.compile(
            r"^Fetching \d+ files|^Downloading '|^Download complete|^Reconstruction complete", re.M
        ),
        read_hf_download,
    ),
    (
        re.compile(r"\bdocker\s+(?:image\s+)?pull\b"),
        re.compile(r": Pulling from |^[0-9a-f]{12}: |^Status: |^Digest: sha256", re.M),
        read_docker_pull,
    ),
    (
        re.compile(r"\bdocker\s+(?:buildx\s+)?build\b|\bbuild-and-copy\.sh\b"),
        re.compile(r"^#\d+ \[(?:[\w.-]+ )?\d+/\d+\] |^#\d+ naming to ", re.M),
        read_docker_build,
    ),
    (re.compile(r"\brsync\b"), re.compile(r"\((?:xfr|xfer)#\d+|\bto-chk=\d"), read_rsync),
    (
        re.compile(r"\bvllm\s+serve\b|\bsglang\.launch_server\b|\bvllm\.entrypoints\b"),
        re.compile(
            r"checkpoint shards|Loading safetensors|Loading weights|Application startup complete|"
            r"fired up and ready|EngineCore|LLM engine|vLLM API server|\bversion \d[\w.+-]*$|"
            r"sglang\.|\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (?:TP|DP)\d",
            re.M,
        ),
        read_engine,
    ),
    (re.compile(r"\b\w+_perf\b"), re.compile(r"^# nccl-tests version", re.M), read_nccl_tests),
    (re.compile(r"\bib_(?:write|read|send)_(?:bw|lat)\b"), re.compile(r"BW Test"), read_perftest),
)


_STEPS = re.compile(r"&&|\|\||;|\n")


@lru_cache(maxsize=512)
def reader_for_command(command: str) -> Reader | None:
    """The reader the command names (every poll asks again about the same few commands)."""
    return next((reader for pattern, _log, reader in READERS if pattern.search(command)), None)


@lru_cache(maxsize=512)
def _last_step_named(command: str) -> bool:
    """Whether the command's last step names its reader (`docker pull X && docker run X …`
    names the pull, but what runs last is whatever the run starts)."""
    steps = [step for step in _STEPS.split(command) if step.strip()]
    return not steps or reader_for_command(steps[-1]) is not None


def _reader(command: str, said: str) -> Reader | None:
    """The command's reader, unless a later step of the command spoke after it in the log."""
    named = reader_for_command(command)
    if named is None:
        return reader_for_log(said)
    if _last_step_named(command):
        return named
    log_sign = next(pattern for _c, pattern, reader in READERS if reader is named)
    own = max((m.start() for m in log_sign.finditer(said)), default=-1)
    latest = reader_for_log(said)
    if latest is not None and latest is not named and own >= 0:
        later = next(pattern for _c, pattern, reader in READERS if reader is latest)
        if max(m.start() for m in later.finditer(said)) > own:
            return latest
    return named


def reader_for_log(text: str) -> Reader | None:
    """The reader of the tool that spoke last in the log."""
    latest, chosen = -1, None
    for _command, pattern, reader in READERS:
        where = max((m.start() for m in pattern.finditer(text)), default=-1)
        if where > latest:
            latest, chosen = where, reader
    return chosen


def read_progress(
    command: str, tail: str, milestones: str = "", *, exited_ok: bool = False
) -> Progress:
    """Progress of a job from the end of its log (and its milestone lines, when fetched).
    A job that exited 0 keeps its error line as an error, not as its summary: tools print
    `ERROR:` lines they recover from (pip's resolver notice)."""
    text = milestones + "\n" + tail
    reader = _reader(command, "\n".join(said_lines(text)))
    if reader is not None:
        progress = reader(tail, milestones)
        if reader is not read_docker_pull and (image := pulled_image(text)):
            progress.facts.setdefault("image_pulled", image)
    else:
        lines = screen_lines(tail)
        progress = Progress("output", message(lines[-1])[:200] if lines else "no output yet")
    return _shared(progress, text, exited_ok)


def _shared(progress: Progress, text: str, exited_ok: bool = False) -> Progress:
    """The error line and a stuck wait, for every kind of job."""
    if progress.ready:
        return progress
    lines = screen_lines(text)
    if progress.error is None and may_hold_error(text):
        error = first_error(lines)
        if error is not None:
            progress = replace(progress, error=error)
    if progress.error is not None:
        if progress.summary.startswith("failed") or exited_ok:
            return progress
        summary = f"failed: {progress.error}"
        if progress.kind not in ("output", "engine") and not progress.summary.startswith("started"):
            summary += f" (after {progress.summary})"
        return replace(progress, summary=summary)
    doomed = cannot_finish([message(line) for line in lines])
    if doomed is not None:
        facts = {**progress.facts, "will_not_finish": doomed}
        summary = f"will not finish: {doomed} (after {progress.summary})"
        return replace(progress, summary=summary, fraction=None, facts=facts)
    waiting = waiting_on(lines)
    if waiting is None:
        return progress
    return replace(progress, waiting=waiting, summary=f"stuck waiting: {waiting}")
