"""The console every face prints to. Piped or redirected output carries no trailing padding.

rich pads tables and Markdown to the full width; on a terminal that is invisible, but in a file or
a pipe every line would end in spaces up to column 80. `TrimmedWriter` drops them on the way out.
"""

from __future__ import annotations

import io
import sys
from typing import TextIO

from rich.console import Console


class TrimmedWriter(io.TextIOBase):
    """A text stream that removes the spaces before each line break of what passes through."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._pending = ""  # spaces at the end of the last write: kept unless a newline follows

    def write(self, text: str) -> int:
        *lines, last = (self._pending + text).split("\n")
        kept = last.rstrip(" ")
        self._pending = last[len(kept) :]
        self._out.write("".join(line.rstrip(" ") + "\n" for line in lines) + kept)
        return len(text)

    def flush(self) -> None:
        self._out.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._out.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self._out, "encoding", None) or "utf-8"


def screen_console(*, stderr: bool = False) -> Console:
    """A console on stdout (or stderr): live and padded on a terminal, trimmed elsewhere.

    No emoji codes: a host's `:fire:` is printed as the host wrote it, and the first table
    does not load rich's table of three thousand emoji names.
    """
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(file=stream, highlight=False, emoji=False)
    return Console(file=TrimmedWriter(stream), highlight=False, emoji=False)
