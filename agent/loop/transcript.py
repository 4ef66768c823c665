"""Writing and reading session transcripts (JSON lines, one event per line, written as it happens).

Secrets are redacted before a line is written. The reader keeps every good line, reports a broken
last line as an interrupted write, and reports (and skips) broken lines elsewhere. It reads line
by line and never holds more than MAX_LINE_BYTES of one line: a longer line is skipped unread and
reported.

Scout never writes a line its reader refuses. A model reply, the one event whose size the model
alone decides, is bounded before the session records or acts on it (agent/loop/reply_bound.py),
so live and replay act on the same content; the events that carry one of its inputs again fit
within the room that leaves. The writer enforces the limit for every event all the same: a line
still too long has its largest values cut with a note (`_fitted`) and is logged, never dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, BinaryIO

import structlog
from pydantic import ValidationError

from agent.loop.events import EVENT_ADAPTER, Event
from agent.loop.redaction import Redaction
from tools.text.new_files import NewFile, create_new, on_file
from tools.text.validation import validation_problems

log = structlog.get_logger(__name__)

MAX_LINE_BYTES = 4 * 1024 * 1024
_SKIP_CHUNK_BYTES = 1024 * 1024


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TranscriptWriter:
    """Appends events to a transcript file, numbering and stamping them, secrets masked."""

    def __init__(
        self,
        target: Path | NewFile,
        session_id: str,
        redactor: Redaction,
        *,
        start_seq: int = 0,
    ):
        """Create the transcript file `target` names: a transcript is never appended to a file
        that exists (another session's, or anything else), so it is created exclusively."""
        self.session_id = session_id
        self.redactor = redactor
        self._seq = start_seq
        self.path, file = create_new(target)
        self._file: IO[str] | None = file

    def write(self, event: Event) -> Event:
        """Stamp, redact and append `event`; returns the stamped (redacted) event."""
        self._seq += 1
        stamped = event.model_copy(
            update={"seq": self._seq, "ts": utc_now(), "session": self.session_id}
        )
        clean = _fitted(self.redactor.data(stamped.model_dump(mode="json")))
        if self._file is not None:
            try:
                self._file.write(_line(clean) + "\n")
                self._file.flush()
            except OSError as exc:  # disk full: the message names the transcript
                raise on_file(exc, self.path) from exc
        return EVENT_ADAPTER.validate_python(clean)

    def close(self) -> None:
        if self._file is not None:
            file, self._file = self._file, None
            try:
                file.close()
            except OSError as exc:  # what a full disk left buffered fails again here
                raise on_file(exc, self.path) from exc


def _line(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _fitted(data: dict[str, Any]) -> dict[str, Any]:
    """`data` as a line within MAX_LINE_BYTES: the largest string on the way down is cut (every
    character is at least one byte, so cutting `excess` of them frees enough), or a container
    whose children are each too small to help is replaced by a note of its size."""
    while (excess := len(_line(data).encode()) + 1 - MAX_LINE_BYTES) > 0:
        log.warning("transcript_line_cut", type=data.get("type"), excess=excess)
        holder: Any = data
        key: Any = max(data, key=lambda k: len(_line(data[k])))
        while isinstance(holder[key], dict | list) and holder[key]:
            child = holder[key]
            keys = child.keys() if isinstance(child, dict) else range(len(child))
            inner = max(keys, key=lambda k: len(_line(child[k])))
            if len(_line(child[inner]).encode()) < excess + 100:
                break
            holder, key = child, inner
        value = holder[key]
        if isinstance(value, str):
            note = f"[cut: {len(value)} characters, longer than a transcript line holds]"
            holder[key] = value[: max(0, len(value) - excess - len(note))] + note
        else:
            size = len(_line(value).encode())
            holder[key] = {"omitted": f"{size} bytes, longer than a transcript line holds"}
    return data


@dataclass
class TranscriptReadResult:
    events: list[Event] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class NotATranscript(ValueError):
    """A file with no session event in it: empty, binary, or another program's."""


def read_session_file(path: Path) -> TranscriptReadResult:
    """`read_transcript`, refusing a file that holds no readable event at all: replaying or
    resuming it would show nothing, or start a session with no goal and no history."""
    loaded = read_transcript(path)
    if loaded.events:
        return loaded
    if not loaded.problems:
        raise NotATranscript(f"{path} is empty, not a Scout transcript")
    raise NotATranscript(f"{path} is not a Scout transcript: no line of it is a session event")


def read_transcript(path: Path) -> TranscriptReadResult:
    """Read every event that parses; say what was skipped and why, line by line."""
    result = TranscriptReadResult()
    with path.open("rb") as handle:
        for number, line, size, is_last in _lines(handle):
            if line is None:
                result.problems.append(
                    f"line {number}: {size / 1024 / 1024:.1f} MB, longer than the "
                    f"{MAX_LINE_BYTES // 1024 // 1024} MB a transcript line may hold; skipped "
                    "without reading it"
                )
                continue
            if not line.strip():
                continue
            try:
                result.events.append(EVENT_ADAPTER.validate_json(line))
            except ValidationError as exc:
                if is_last:
                    result.problems.append(
                        f"line {number}: the last line is incomplete (the session was probably "
                        "interrupted while writing it); skipped it and kept everything before"
                    )
                else:
                    first = validation_problems(exc)[0].removeprefix("(input): ")
                    result.problems.append(f"line {number}: not a valid event ({first}); skipped")
    return result


def _lines(handle: BinaryIO) -> Iterator[tuple[int, str | None, int, bool]]:
    """(number, text, size in bytes, is it the last line) for each line; text is None for a
    line over MAX_LINE_BYTES, which is skipped in chunks and never held whole."""
    pending: tuple[int, str | None, int] | None = None
    number = 0
    while True:
        raw = handle.readline(MAX_LINE_BYTES + 1)
        if not raw:
            break
        number += 1
        size = len(raw)
        text: str | None = None
        if size > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):
                raw = handle.readline(_SKIP_CHUNK_BYTES)
                size += len(raw)
        else:
            text = raw.decode("utf-8", errors="replace")
        if pending is not None:
            yield (*pending, False)
        pending = (number, text, size)
    if pending is not None:
        yield (*pending, True)
