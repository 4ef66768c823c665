"""Reads a sed script far enough to tell whether it writes files (`w`, `W`) or runs commands."""

from __future__ import annotations

HARMLESS_COMMANDS = frozenset("dDgGhHlnNpPqQxz=F")
TEXT_COMMANDS = frozenset("aic")
LABEL_COMMANDS = frozenset(":btT")
FILE_READ_COMMANDS = frozenset("rR")
WRITING = {"w": "writes a file (w)", "W": "writes a file (W)", "e": "runs a shell command (e)"}


def sed_script_writes(script: str) -> str | None:
    """Why the script is not read-only, or None when it only prints."""
    reader = _SedReader(script)
    try:
        return reader.problem()
    except IndexError:
        return "could not be read to the end"


class _SedReader:
    def __init__(self, script: str) -> None:
        self.s = script
        self.i = 0

    def problem(self) -> str | None:
        s = self.s
        while self.i < len(s):
            char = s[self.i]
            if char in " \t\n;{}!,0123456789$~+":
                self.i += 1
            elif char == "/":
                self._skip_delimited("/")
            elif char == "\\":
                self._skip_delimited(s[self.i + 1], start=self.i + 1)
            elif char in ("s", "y"):
                delimiter = s[self.i + 1]
                self._skip_delimited(delimiter, start=self.i + 1, parts=2)
                if char == "s" and (found := self._s_flags_problem()):
                    return found
            elif char in WRITING:
                return WRITING[char]
            elif char in TEXT_COMMANDS or char in FILE_READ_COMMANDS:
                self._skip_line()
            elif char in LABEL_COMMANDS:
                self._skip_label()
            elif char in HARMLESS_COMMANDS or char in "IM":
                self.i += 1
            else:
                return f"uses command {char!r} that is not known to be read-only"
        return None

    def _skip_delimited(self, delimiter: str, *, start: int | None = None, parts: int = 1) -> None:
        self.i = (self.i if start is None else start) + 1
        for _ in range(parts):
            while self.s[self.i] != delimiter:
                self.i += 2 if self.s[self.i] == "\\" else 1
            self.i += 1

    def _s_flags_problem(self) -> str | None:
        while self.i < len(self.s) and self.s[self.i] not in ";}\n":
            flag = self.s[self.i]
            if flag in ("w", "e"):
                return WRITING[flag]
            self.i += 1
        return None

    def _skip_line(self) -> None:
        end = self.s.find("\n", self.i)
        self.i = len(self.s) if end < 0 else end

    def _skip_label(self) -> None:
        self.i += 1
        while self.i < len(self.s) and self.s[self.i] not in ";\n}":
            self.i += 1
