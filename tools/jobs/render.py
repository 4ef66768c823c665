"""Job records as the model reads them: a header per job, its progress, the end of its log."""

from __future__ import annotations

from tools.jobs.progress.lines import screen_lines
from tools.jobs.records import JobRecord

RUNNING_TAIL_LINES = 3
FINISHED_TAIL_LINES = 12


def duration(seconds: int | None) -> str:
    if seconds is None:
        return "?"
    minutes, secs = divmod(max(0, seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def state_words(record: JobRecord) -> str:
    """`running 2m13s`, `exited 0 after 5m02s`, `stopped (exit 143)`, `lost`, …"""
    took = duration(record.elapsed_s)
    if record.state == "running":
        return f"running {took}"
    if record.state == "starting":
        return "starting"
    if record.state == "exited":
        return f"exited {record.exit_code} after {took}"
    if record.state == "stopped":
        code = f", exit {record.exit_code}" if record.exit_code is not None else ""
        return f"stopped by Scout after {took}{code}"
    if record.state == "missing":
        return f"missing: {record.host} has no job named {record.name}"
    return (
        "lost: its runner is gone without an exit status (the host restarted, or the process "
        "was killed outside Scout)"
    )


def render_record(record: JobRecord) -> str:
    lines = [f"== {record.host}/{record.name}: {state_words(record)} =="]
    if record.state == "missing":
        return lines[0]
    progress = record.progress
    if progress is not None:
        lines.append(f"progress: {progress.summary}")
        if progress.error and not progress.summary.startswith("failed"):
            lines.append(f"error in log: {progress.error}")
    if record.match is not None:
        lines.append(f"matched: {record.match.strip()}")
    shown = screen_lines(record.tail)
    keep = RUNNING_TAIL_LINES if record.state in ("running", "starting") else FINISHED_TAIL_LINES
    if shown:
        lines.append(f"log ({record.log_bytes} bytes), last lines:")
        lines += [f"  {line[:300]}" for line in shown[-keep:]]
    elif record.state != "starting":
        lines.append("log: (empty)")
    return "\n".join(lines)


def progress_line(record: JobRecord) -> str:
    """One line for the face while waiting."""
    summary = record.progress.summary if record.progress else ""
    return f"{record.host}/{record.name}: {state_words(record).split(':')[0]}" + (
        f" · {summary}" if summary else ""
    )
