"""What a tool prints when the kernel refused it: the sign that its output is not the truth.

Inside the wall a read that reaches past it (another process's /proc entries, a daemon's
socket, the kernel log without CAP_SYSLOG) fails with EACCES or EPERM, and many tools then
print nothing, or a zero, on stdout and the refusal on stderr: `dmesg | grep -ci xid` prints
`0`. Such a result is reported as "could not read inside the wall: LINE" (tools/ssh/
sections.py, tools/recon/sections.py), never as its output, and no fact is built on it.
"""

from __future__ import annotations

import re

# strerror(EACCES) and strerror(EPERM), as glibc and musl word them
_DENIED = re.compile(r"Permission denied|Operation not permitted", re.IGNORECASE)
COULD_NOT_READ = "could not read inside the wall"


def denied_lines(text: str) -> list[str]:
    """Every line in which a tool says the kernel refused it: what the wall stopped."""
    return [line.strip() for line in text.splitlines() if _DENIED.search(line)]


def denied_line(text: str) -> str | None:
    """The first line in which a tool says the kernel refused it, or None."""
    return next(iter(denied_lines(text)), None)
