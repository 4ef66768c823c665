"""The recorded sessions that ship with Scout (package data in `agent.transcripts`), by name.

`scout replay seed-pair-deploy` and `scout demo` find them with importlib.resources, so they work
from any folder and from any kind of install; a path to a transcript file works as well.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources import as_file, files
from pathlib import Path

RECORDINGS = files("agent.transcripts")
DEMO_RECORDING = "fresh-pair-deploy"


def recording_names() -> list[str]:
    """The names of the bundled recordings, e.g. `seed-pair-deploy`."""
    return sorted(p.name[:-6] for p in RECORDINGS.iterdir() if p.name.endswith(".jsonl"))


@contextmanager
def recording_path(name_or_path: str | Path) -> Iterator[Path | None]:
    """A transcript file: the path itself when it exists, else the bundled recording so named.

    Only a bare name (no folder) is looked up among the bundled recordings, so a mistyped path is
    reported as missing rather than silently replaced. None when neither exists.
    """
    path = Path(name_or_path).expanduser()
    if path.is_file():
        yield path
        return
    resource = RECORDINGS / f"{path.name.removesuffix('.jsonl')}.jsonl"
    if len(path.parts) != 1 or not resource.is_file():
        yield None
        return
    with as_file(resource) as real:
        yield real


def missing_message(name_or_path: str | Path) -> str:
    """What to say when `recording_path` found nothing."""
    return (
        f"no such transcript: {name_or_path} (a .jsonl file, or a bundled recording: "
        f"{', '.join(recording_names())})"
    )
