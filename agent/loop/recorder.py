"""Fans each session event out to the transcript (first) and to whoever watches: faces, tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent.loop.events import Event
from agent.loop.transcript import TranscriptWriter, utc_now


class SessionListener:
    """What a face can watch. Events come after they are written; text deltas as they stream."""

    def on_event(self, event: Event) -> None: ...

    def on_text(self, delta: str) -> None: ...

    def on_call_started(self, call_id: str, tool: str, summary: str, hosts: list[str]) -> None: ...


class Recorder:
    def __init__(
        self,
        writer: TranscriptWriter | None,
        session_id: str,
        listeners: Iterable[SessionListener] = (),
    ) -> None:
        self.writer = writer
        self.session_id = session_id
        self.listeners: list[SessionListener] = list(listeners)
        self._seq = 0

    def emit(self, event: Event) -> Event:
        if self.writer is not None:
            event = self.writer.write(event)
        else:
            self._seq += 1
            event = event.model_copy(
                update={"seq": self._seq, "ts": utc_now(), "session": self.session_id}
            )
        for listener in self.listeners:
            listener.on_event(event)
        return event

    def text(self, delta: str) -> None:
        for listener in self.listeners:
            listener.on_text(delta)

    def call_started(self, **fields: Any) -> None:
        for listener in self.listeners:
            listener.on_call_started(**fields)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
