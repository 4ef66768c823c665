"""Moving the running event loop's clock forward, so that a test reaches a timeout when it is
ready instead of racing it.

A test that must act while something waits and then see the wait time out (a forged answer
rejected while the approver waits for the real one) races the machine's load under any short
real timeout: on a loaded machine its own steps can take longer than the timeout. With a long
timeout and this clock, the test acts at its own pace and then moves the clock past the deadline:
asyncio.timeout, call_at and sleep all read loop.time(), so the timeout fires on the next turn.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def movable_clock() -> Iterator[Callable[[float], None]]:
    """Yields `forward(seconds)`, which moves the running loop's clock on by `seconds`."""
    loop = asyncio.get_running_loop()
    real = loop.time
    ahead = 0.0

    def moved() -> float:
        return real() + ahead

    def forward(seconds: float) -> None:
        nonlocal ahead
        ahead += seconds

    loop.time = moved  # type: ignore[method-assign]  # the instance attribute shadows the method
    try:
        yield forward
    finally:
        del loop.time
