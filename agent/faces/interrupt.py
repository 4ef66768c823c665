"""Ctrl-C for a face that runs one long piece of work: stop it cleanly, then say so.

The first Ctrl-C cancels the work, and its cleanup (killing the remote commands, stopping the
simulator and its processes) runs to the end before the face returns. Further presses meanwhile
are noted, not obeyed, so nothing is left half torn down and no traceback reaches the screen.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


class Interrupted(Exception):
    """The operator pressed Ctrl-C and the work was stopped (its cleanup has run)."""


async def until_interrupted(work: Awaitable[T], on_repeat: Callable[[], None] | None = None) -> T:
    """Await `work`; the first Ctrl-C cancels it and raises Interrupted once it has wound down."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    presses = 0

    def on_sigint() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            task.cancel()
        elif on_repeat is not None:
            on_repeat()

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    try:
        return await task
    except asyncio.CancelledError:
        if presses and task.cancelled():
            raise Interrupted from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGINT)
