"""Logging: structured JSON lines to a file, never over the screen a face is drawing."""

from __future__ import annotations

import logging
from pathlib import Path

import structlog

from agent.faces.library_warnings import release_held_warnings
from agent.safety.redact import Redactor


def configure_logging(path: Path, redactor: Redactor, level: int = logging.INFO) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)

    def redact(_logger: object, _name: str, event_dict: dict) -> dict:
        return redactor.data(event_dict)

    shared = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.dict_tracebacks,
                redact,
                structlog.processors.JSONRenderer(),
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("asyncssh", "httpx", "httpx2", "anthropic", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    release_held_warnings()  # libraries' warnings raised before the file existed (imports)
