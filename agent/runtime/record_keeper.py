"""Keeps the deployment record current while a session runs (agent/runtime/deployment_record.py).

It watches the session's events as the transcript receives them and, each time an endpoint check
passes after the approved rollout finished, writes the record of that deployment: a session that
proves its endpoint leaves its last known-good state behind, whichever face ran it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import structlog

from agent.loop.events import Event, StateChangeEvent, ToolResultEvent
from agent.loop.recorder import SessionListener
from agent.runtime.deployment_record import RecordStore, build_record

log = structlog.get_logger(__name__)


class RecordKeeper(SessionListener):
    """Writes the record of each deployment the session proves; `saved` lists the files."""

    def __init__(self, store: RecordStore, transcript: Path) -> None:
        self.store = store
        self.transcript = transcript
        self.saved: list[Path] = []
        self._events: list[dict[str, Any]] = []

    def on_event(self, event: Event) -> None:
        if isinstance(event, StateChangeEvent):
            self._events.append(event.model_dump(mode="json"))
        elif isinstance(event, ToolResultEvent) and event.name == "endpoint_check":
            self._events.append(event.model_dump(mode="json"))
            if not event.is_error:
                self._write()

    def _write(self) -> None:
        record = build_record(self._events, self.transcript)
        if record is None:
            return
        try:
            path = self.store.save(record)
        except OSError as exc:  # the deployment stands; only its record could not be written
            log.warning("deployment_record_not_written", record=record.id, error=str(exc))
            return
        self.saved.append(path)
        log.info("deployment_recorded", record=record.id, path=str(path))
