"""Logs before a face opens its log file: structlog drops what it is given until then.

structlog is configured the moment it is imported, not before (agent/faces/after_import.py), so
a command that logs nothing through it never loads it; the log file itself is
agent/faces/log_file.py, loaded (with logging) only by a face that opens one.
"""

from __future__ import annotations

from types import ModuleType

from agent.faces.after_import import when_imported


def keep_logs_off_the_screen() -> None:
    """Until a face opens its log file, structlog drops what it is given. Unconfigured,
    structlog prints to stdout, over the face's own output: a pool's log line once became the
    first row of `scout eval`'s table. A face that opens its file reconfigures it."""
    when_imported("structlog", _drop_until_configured)


def _drop_until_configured(structlog: ModuleType) -> None:
    if not structlog.is_configured():  # a face (or a test) that configured it keeps its own
        structlog.configure(
            processors=[],
            logger_factory=structlog.ReturnLoggerFactory(),
            cache_logger_on_first_use=False,  # the face's configuration applies when it comes
        )
