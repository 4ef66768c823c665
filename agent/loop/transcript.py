"""Writing and reading session transcripts (JSON lines, one event per line, written as it happens).

Secrets are redacted before a line is written. The reader keeps every good line, reports a broken
last line as an interrupted write, and reports (and skips) broken lines elsewhere.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from agent.loop.events import EVENT_ADAPTER, Event
from agent.loop.redaction import Redaction
from tools.validation_errors import validation_problems


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TranscriptWriter:
    """Appends events to a transcript file, numbering and stamping them, secrets masked."""

    def __init__(self, path: Path, session_id: str, redactor: Redaction, *, start_seq: int = 0):
        self.path = path
        self.session_id = session_id
        self.redactor = redactor
        self._seq = start_seq
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = path.open("a", encoding="utf-8")

    def write(self, event: Event) -> Event:
        """Stamp, redact and append `event`; returns the stamped (redacted) event."""
        self._seq += 1
        stamped = event.model_copy(
            update={"seq": self._seq, "ts": utc_now(), "session": self.session_id}
        )
        clean = self.redactor.data(stamped.model_dump(mode="json"))
        if self._file is not None:
            self._file.write(json.dumps(clean, ensure_ascii=False, separators=(",", ":")) + "\n")
            self._file.flush()
        return EVENT_ADAPTER.validate_python(clean)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


@dataclass
class TranscriptReadResult:
    events: list[Event] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def read_transcript(path: Path) -> TranscriptReadResult:
    """Read every event that parses; say what was skipped and why, line by line."""
    result = TranscriptReadResult()
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    last_index = len(lines) - 1
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            result.events.append(EVENT_ADAPTER.validate_json(line))
        except ValidationError as exc:
            if index == last_index:
                result.problems.append(
                    f"line {index + 1}: the last line is incomplete (the session was probably "
                    "interrupted while writing it); skipped it and kept everything before"
                )
            else:
                first = validation_problems(exc)[0].removeprefix("(input): ")
                result.problems.append(f"line {index + 1}: not a valid event ({first}); skipped")
    return result
