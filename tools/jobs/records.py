"""What the status script prints, read into one record per job.

A job is `running` while its runner lives, `exited` once it wrote an exit status, `stopped`
when Scout stopped it (with the status if the runner could still record it), `lost` when the
runner is gone without a status (killed with the host, OOM-killed, rebooted), `starting` in
the moment before the runner wrote its pid, and `missing` when the host has no such job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tools.jobs.progress import Progress, read_progress

STARTING_GRACE_S = 10
BLOCKS = ("command", "milestones", "match", "tail")  # each runs to the next token line


@dataclass(frozen=True)
class JobRecord:
    host: str
    name: str
    state: str
    exit_code: int | None = None
    pid: int | None = None
    started: int | None = None
    ended: int | None = None
    elapsed_s: int | None = None
    log_bytes: int = 0
    command: str = ""
    tail: str = ""
    match: str | None = None
    progress: Progress | None = None
    stop_requested: bool = False

    @property
    def finished(self) -> bool:
        return self.state in ("exited", "stopped", "lost", "missing")

    @property
    def failed(self) -> bool:
        return self.state in ("lost", "missing") or (self.state == "exited" and self.exit_code != 0)

    def facts(self) -> dict[str, Any]:
        """The record as plain data (for ToolResult.data and the world model)."""
        data: dict[str, Any] = {
            "host": self.host,
            "name": self.name,
            "state": self.state,
            "exit_code": self.exit_code,
            "pid": self.pid,
            "started_at": self.started,
            "ended_at": self.ended,
            "elapsed_s": self.elapsed_s,
            "log_bytes": self.log_bytes,
            "command": self.command,
        }
        if self.match is not None:
            data["match"] = self.match
        if self.progress is not None:
            data["progress"] = {
                "kind": self.progress.kind,
                "summary": self.progress.summary,
                "fraction": self.progress.fraction,
                "ready": self.progress.ready,
                "error": self.progress.error,
                "waiting": self.progress.waiting,
                **self.progress.facts,
            }
        return data


def parse_status(host: str, output: str, token: str) -> tuple[int | None, list[JobRecord]]:
    """(the host's uptime in seconds, the records) from one status script's output.

    The output is cut at its token lines in one go: a job's log lines are never looked at
    one by one here (its blocks are long, its records few).
    """
    now: int | None = None
    records: list[JobRecord] = []
    current: dict[str, Any] | None = None
    for piece in ("\n" + output).split(f"\n{token} ")[1:]:
        head, _, body = piece.partition("\n")
        key, _, value = head.partition(" ")
        if key == "uptime":
            now = _int(value)
        elif key in ("job", "end"):
            if current is not None:
                records.append(_record(host, current, now))
            current = _fresh(value) if key == "job" else None
        elif current is not None and key in BLOCKS:
            current[key] = body[:-1] if body.endswith("\n") else body
        elif current is not None:
            current[key] = value
    if current is not None:
        records.append(_record(host, current, now))
    return now, records


def _fresh(name: str) -> dict[str, Any]:
    return {"name": name, **dict.fromkeys(BLOCKS, "")}


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _record(host: str, raw: dict[str, Any], now: int | None) -> JobRecord:
    name = raw["name"]
    if "missing" in raw:
        return JobRecord(host, name, "missing")
    started, ended, code = _int(raw.get("started")), _int(raw.get("ended")), _int(raw.get("exit"))
    since, until = _int(raw.get("startup")), _int(raw.get("endup"))
    stopped = "stop" in raw
    if code is not None:
        state = "stopped" if stopped else "exited"
    elif "alive" in raw:
        state = "running"
    elif stopped:
        state = "stopped"
    elif "pid" not in raw and now is not None and since is not None:
        state = "starting" if now - since < STARTING_GRACE_S else "lost"
    else:
        state = "lost"
    end = until if until is not None else (now if code is None else None)
    elapsed = end - since if end is not None and since is not None else None
    if elapsed is None and ended is not None and started is not None:
        elapsed = ended - started
    command, tail = raw["command"], raw["tail"]
    match = raw["match"] or None
    return JobRecord(
        host=host,
        name=name,
        state=state,
        exit_code=code,
        pid=_int(raw.get("pid")),
        started=started,
        ended=ended,
        elapsed_s=elapsed,
        log_bytes=_int(raw.get("size")) or 0,
        command=command,
        tail=tail,
        match=match,
        progress=read_progress(
            command,
            _whole_lines(tail, _int(raw.get("size"))),
            raw["milestones"],
            exited_ok=state == "exited" and code == 0,
        ),
        stop_requested=stopped,
    )


def _whole_lines(tail: str, log_bytes: int | None) -> str:
    """The tail without its first line when the cut fell inside it: a line without its start
    has lost who said it and at what level (a WARNING's end is no error). A progress bar's line
    (states rewritten with \\r) keeps its last states at its end, so it stays."""
    first, newline, rest = tail.partition("\n")
    cut = log_bytes is not None and log_bytes > len(tail) + 1
    return rest if cut and newline and rest.strip() and "\r" not in first else tail
