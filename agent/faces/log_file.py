"""The log file: structured JSON lines, secrets masked, never over the screen a face draws.

structlog is configured the moment it is imported, not before: now where a module has imported
it already, else when the first one does (agent/faces/after_import.py), and the file's JSON
formatter (with its redactor) is built at the first record. A command that logs nothing through
structlog (`scout recon` over OpenSSH) so never loads it, nor rich's pretty-printer and attrs
that it brings, nor the secret patterns. This module (and logging with it) loads only when a
face opens its log file.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from agent.faces.after_import import when_imported
from agent.faces.library_warnings import release_held_warnings

if TYPE_CHECKING:
    from agent.safety.redact import Redactor


def configure_logging(
    path: Path, redactor: Callable[[], Redactor], level: int = logging.INFO
) -> None:
    """Log to `path`, secrets masked by the redactor that `redactor` makes at the first record."""
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    root.handlers[:] = [_JSONFileHandler(path, redactor)]
    root.setLevel(level)
    for noisy in ("asyncssh", "httpx", "httpx2", "anthropic", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    when_imported("structlog", _configure_structlog)
    release_held_warnings()  # libraries' warnings raised before the file existed (imports)


def _shared_processors() -> list[Any]:
    import structlog

    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]


def _configure_structlog(structlog: ModuleType) -> None:
    structlog.configure(
        processors=[*_shared_processors(), structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )


class _JSONFileHandler(logging.FileHandler):
    """The log file; its structlog formatter (JSON, redacted) is built at the first record."""

    def __init__(self, path: Path, redactor: Callable[[], Redactor]) -> None:
        super().__init__(path, encoding="utf-8")
        self.redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        if self.formatter is None:
            self.setFormatter(_json_formatter(self.redactor()))
        return super().format(record)


def _json_formatter(redactor: Redactor) -> logging.Formatter:
    import structlog

    def redact(_logger: object, _name: str, event_dict: dict) -> dict:
        return redactor.data(event_dict)

    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_shared_processors(),
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.dict_tracebacks,
            redact,
            structlog.processors.JSONRenderer(),
        ],
    )
