"""Files Scout writes for a session (transcripts, proof reports) under names no other file has.

Two sessions started in the same second must never share a file: a name is a stem, a UTC stamp
and a random token, and every file is created exclusively (O_EXCL), so a name already taken by
another session (or anything else) is never opened, appended to or overwritten; a new token is
drawn instead. Files that belong together (a proof's chart and JSON) share one stem and are
claimed together.
"""

from __future__ import annotations

import contextlib
import errno
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

MAX_TRIES = 16  # a token has 48 random bits: a second try already means something is wrong


@dataclass(frozen=True)
class NewFile:
    """A file to create in `folder` as `{prefix}-{stamp}-{token}{suffix}`: the name is chosen
    when it is created, so it cannot be one that exists."""

    folder: Path
    prefix: str
    suffix: str


def create_exclusive(path: Path) -> TextIO:
    """`path` opened for writing, created by this call; FileExistsError when it already exists."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("x", encoding="utf-8")


def create_new(target: NewFile | Path) -> tuple[Path, TextIO]:
    """The file `target` names, created exclusively, and its path."""
    if isinstance(target, Path):
        return target, create_exclusive(target)
    ((path, handle),) = create_together(target.folder, target.prefix, (target.suffix,))
    return path, handle


def create_together(
    folder: Path, prefix: str, suffixes: tuple[str, ...]
) -> list[tuple[Path, TextIO]]:
    """One new file per suffix, all with the same fresh stem, each created exclusively; a stem
    any of them already has is given up (what was claimed of it removed) for a new one."""
    folder.mkdir(parents=True, exist_ok=True)
    for _ in range(MAX_TRIES):
        stem = f"{prefix}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(6)}"
        claimed: list[tuple[Path, TextIO]] = []
        try:
            for suffix in suffixes:
                path = folder / f"{stem}{suffix}"
                claimed.append((path, create_exclusive(path)))
        except FileExistsError:
            _give_up(claimed)
            continue
        except BaseException:
            _give_up(claimed)
            raise
        return claimed
    raise FileExistsError(
        errno.EEXIST, f"{MAX_TRIES} fresh names for {prefix}-* were all taken", str(folder)
    )


def on_file(exc: OSError, path: Path) -> OSError:
    """`exc` naming the file it happened on: a failed write or flush (disk full) names none, and
    a message must say which file and which folder."""
    if exc.filename:
        return exc
    return type(exc)(exc.errno, exc.strerror or str(exc), str(path))


def _give_up(claimed: list[tuple[Path, TextIO]]) -> None:
    for path, handle in claimed:
        handle.close()
        with contextlib.suppress(OSError):
            path.unlink()
