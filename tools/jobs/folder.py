"""Where a job lives on its host, and which names a job may have.

`~/.scout/jobs/NAME/` (or `$SCOUT_JOBS_DIR/NAME/` where the host's environment sets it: a
larger disk, a shared folder, a test's own folder) holds `command`, `started` (epoch seconds,
the host's clock), `pidstart` and `pid` (the runner: leader of the job's session and process
group, and its start time, to tell a reused pid), `log` (stdout and stderr together) and, once
the job ends, `ended` and `exit`; `stop` when Scout stopped it. The folder is the job's only
record: status, logs, wait, stop and resume read it, from any connection.
"""

from __future__ import annotations

import re

JOB_ROOT = "${SCOUT_JOBS_DIR:-$HOME/.scout/jobs}"
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
_NAME = re.compile(NAME_PATTERN)


def check_name(name: str) -> str:
    """The name, if it can be a folder name in any shell without quoting surprises."""
    if not _NAME.match(name):
        raise ValueError(
            f"job name {name!r} must start with a letter or digit and use only letters, "
            "digits, '.', '_' and '-' (at most 64)"
        )
    return name


def job_dir(name: str) -> str:
    """The folder as a shell word (double-quoted so $HOME expands)."""
    return f'"{JOB_ROOT}/{check_name(name)}"'
