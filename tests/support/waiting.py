"""Waiting in a test for what another process or task does: poll until it comes true, and fail
only after a deadline that bounds a hang.

Counting polls (`for _ in range(100): …; sleep(0.05)`) or allowing a few seconds turns the wait
into a race with the machine's load: on a loaded two-core CI machine a command can take many
seconds to start, print or be reaped, and the test fails with nothing wrong. WAIT_S is long
enough that only a real hang reaches it; a condition that comes true returns at once.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

WAIT_S = 120.0
POLL_S = 0.05

T = TypeVar("T")


async def until(
    condition: Callable[[], T | Awaitable[T]],
    what: str = "the condition",
    *,
    within: float = WAIT_S,
) -> T:
    """Poll `condition` (plain or async) until it returns something true, and return that;
    fail the test with `what` once `within` seconds have passed."""
    deadline = time.monotonic() + within
    while True:
        found = condition()
        if inspect.isawaitable(found):
            found = await found
        if found:
            return found  # type: ignore[return-value]
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {within:g} s waiting for {what}")
        await asyncio.sleep(POLL_S)
