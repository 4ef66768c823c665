"""The world's jobs two ways: a few lines for the model, a table for `/jobs`.

One line per job: where, what (the command, cut short; not for a job that ended well, whose
name and progress say what it did), its state with elapsed time or exit code, and its last
progress. Finished jobs stay listed (the model needs to know a download is
done), but only the newest FINISHED_SHOWN of them; running and unknown ones always show.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table

from tools.jobs.render import duration
from tools.world.jobs import JobFact

FINISHED_SHOWN = 8
COMMAND_CHARS = 60  # enough to tell jobs apart; job_status and /jobs show the whole command
LINE_CHARS = 240


def state_text(fact: JobFact) -> str:
    """`running 2m13s`, `exited 0 after 5m02s`, `unknown (host unreachable)`, …"""
    took = duration(fact.elapsed_s)
    if fact.state == "running":
        return f"running {took}"
    if fact.state == "exited":
        return f"exited {fact.exit_code} after {took}"
    if fact.state == "stopped":
        return f"stopped by Scout after {took}"
    if fact.state == "unknown":
        return "unknown (its host did not answer; the job may still run)"
    if fact.state == "lost":
        return "lost (runner gone without an exit status)"
    return fact.state


def job_line(fact: JobFact) -> str:
    progress = f" · {fact.progress}" if fact.progress else ""
    command = " ".join(fact.command.split())
    command = command if len(command) <= COMMAND_CHARS else command[: COMMAND_CHARS - 1] + "…"
    done = fact.state == "exited" and fact.exit_code == 0
    what = "" if done else f" [{command}]"
    line = f"{fact.key}{what}: {state_text(fact)}{progress}"
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"


def shown_jobs(jobs: Iterable[JobFact], hosts: Iterable[str] | None = None) -> list[JobFact]:
    """Unfinished jobs, then the newest finished ones; only on `hosts` when given."""
    wanted = set(hosts) if hosts is not None else None
    picked = [j for j in jobs if wanted is None or j.host in wanted]
    finished = sorted((j for j in picked if j.finished), key=lambda j: j.seen_at)
    return [j for j in picked if not j.finished] + finished[-FINISHED_SHOWN:]


def compact_job_lines(jobs: dict[str, JobFact], hosts: Iterable[str] | None) -> list[str]:
    """The lines the model reads in the world model (none when there are no jobs)."""
    shown = shown_jobs(jobs.values(), hosts)
    if not shown:
        return []
    hidden = len([j for j in jobs.values() if hosts is None or j.host in set(hosts)]) - len(shown)
    more = [f"  (+{hidden} older finished jobs; job_status lists them)"] if hidden > 0 else []
    return ["jobs:", *(f"  {job_line(j)}" for j in shown), *more]


def jobs_table(jobs: dict[str, JobFact]) -> Table:
    """The people's view for `/jobs`: every job Scout knows of this session."""
    table = Table(title="jobs")
    for column in ("host", "job", "state", "progress", "command"):
        table.add_column(column, overflow="fold")
    styles = {"running": "yellow", "exited": "green", "unknown": "magenta"}
    for fact in jobs.values():
        style = styles.get(fact.state, "red")
        if fact.state == "exited" and fact.exit_code != 0:
            style = "red"
        table.add_row(
            fact.host,
            fact.name,
            f"[{style}]{state_text(fact)}[/]",
            fact.progress or "",
            fact.command,
        )
    return table
