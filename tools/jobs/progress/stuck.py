"""Stuck is a state: a log that says it waits on something that is not coming.

Real jobs wait in their own words: vLLM on a Ray placement group (`Waiting for creating a
placement group of specs for 310 seconds. specs=[…]`, every few seconds), the Hugging Face
client on a file lock (`Still waiting to acquire lock on … (elapsed: 10.1 seconds)`), apt on
dpkg's lock (`Waiting for cache lock: Could not get lock …`), scripts on a port or a peer
(`Waiting for port 8000…`, `waiting for the head node`). Such a wait is a state once it is the
log's latest news and has run past its bound: the same wait said `REPEATS` times, or a wait
that counts its own seconds past `BOUND_S`. The reason is the wait's first sentence.

A wait is stuck at once, within its bound, when the job said before it that what it waits for
is not there (vLLM: `The number of required GPUs exceeds the total number of available GPUs in
the placement group.`): the reason is that line, since it says why the wait will not end.
"""

from __future__ import annotations

import re

from tools.jobs.progress.prefixes import peel

REPEATS = 3
BOUND_S = 60
LATEST = 4  # the wait must be among the log's last lines: later news means it ended

_WAIT = re.compile(
    r"\b(?:still\s+)?waiting\s+(?:for|on|to acquire|until)\b|\bcould not get lock\b|"
    r"\bis held by process\b",
    re.I,
)
# the job asks for more than there is: `required … exceeds … available …`
_LACKS = re.compile(r"\b(?:required|requested)\b.{0,60}\bexceeds?\b.{0,60}\bavailable\b", re.I)
_SECONDS = re.compile(r"(?:for|elapsed:?)\s+(?P<n>\d+(?:\.\d+)?)\s*(?:s\b|sec|seconds)", re.I)
_NUMBERS = re.compile(r"\d+(?:\.\d+)?")


def waiting_on(lines: list[str]) -> str | None:
    """Why the job is stuck waiting, from its screen lines; None when it is not."""
    # a line read twice (a milestone that is also in the tail) is one line: it keeps its stamp
    said = [peel(line).text for line in dict.fromkeys(lines[-200:])]
    said = [text for text in said if text.strip()]
    last = next((i for i in range(len(said) - 1, -1, -1) if _WAIT.search(said[i])), None)
    if last is None or last < len(said) - LATEST:
        return None
    wait = said[last]
    shape = _NUMBERS.sub("#", wait)
    repeats = sum(1 for text in said if _NUMBERS.sub("#", text) == shape)
    seconds = max((float(m["n"]) for m in _SECONDS.finditer(wait)), default=0.0)
    if repeats < REPEATS and seconds < BOUND_S:
        return _lacking(said[:last], said[last:])
    reason = re.split(r"(?<=[^.\d])\.\s", wait, maxsplit=1)[0].strip().rstrip(".")
    return reason[:200] + (f" (said {repeats} times)" if repeats >= REPEATS else "")


def _lacking(before: list[str], waits: list[str]) -> str | None:
    """The line saying what the job waits for is not there, when only waits followed it."""
    lack = next((text for text in reversed(before) if _LACKS.search(text)), None)
    if lack is None or not all(_WAIT.search(text) for text in before[before.index(lack) + 1 :]):
        return None
    return lack.strip().rstrip(".")[:200] if all(_WAIT.search(t) for t in waits) else None
