"""Logging: structured JSON lines to a file, never over the screen a face is drawing.

structlog is configured the moment it is imported, not before: now where a module has imported
it already, else when the first one does (an import hook), and the file's JSON formatter (with
its redactor) is built at the first record. A command that logs nothing through structlog
(`scout recon` over OpenSSH) so never loads it, nor rich's pretty-printer and attrs that it
brings, nor the secret patterns.
"""

from __future__ import annotations

import importlib.machinery
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from agent.faces.library_warnings import release_held_warnings

if TYPE_CHECKING:
    from importlib.abc import Loader

    from agent.safety.redact import Redactor


def keep_logs_off_the_screen() -> None:
    """Until a face opens its log file, structlog drops what it is given. Unconfigured,
    structlog prints to stdout, over the face's own output: a pool's log line once became the
    first row of `scout eval`'s table. A face that opens its file reconfigures it."""
    _when_imported("structlog", _drop_until_configured)


def _drop_until_configured(structlog: ModuleType) -> None:
    if not structlog.is_configured():  # a face (or a test) that configured it keeps its own
        structlog.configure(
            processors=[],
            logger_factory=structlog.ReturnLoggerFactory(),
            cache_logger_on_first_use=False,  # the face's configuration applies when it comes
        )


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
    _when_imported("structlog", _configure_structlog)
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


def _when_imported(name: str, then: Callable[[ModuleType], None]) -> None:
    """Call `then(module)` once `name` is imported: now if it is, else right after its import."""
    if name in sys.modules:
        then(sys.modules[name])
    else:
        sys.meta_path.insert(0, _AfterImport(name, then))


class _AfterImport:
    """Finds `name` the standard way, once, and runs `then` when its module has executed. A meta
    path finder by its method, as the import system asks, and _ThenLoader a loader by its: not
    importlib.abc's classes, whose import loads importlib.resources, tempfile and more at every
    start of every face."""

    def __init__(self, name: str, then: Callable[[ModuleType], None]) -> None:
        self.name, self.then = name, then

    def find_spec(
        self, name: str, path: object = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _ThenLoader(spec.loader, self.then)
        return spec


class _ThenLoader:
    def __init__(self, inner: Loader, then: Callable[[ModuleType], None]) -> None:
        self.inner, self.then = inner, then

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        self.then(module)
