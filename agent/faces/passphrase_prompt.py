"""Asking for a key's passphrase on the controlling terminal, as ssh does (/dev/tty, no echo).

`scout recon` and `scout doctor` use this; `scout chat` asks through its own prompt instead (the
live display must pause). Where there is no terminal there is no prompt, and the SSH pool says to
load the key into ssh-agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tools.ssh.passphrase import PassphrasePrompt


def terminal_passphrase_prompt() -> PassphrasePrompt | None:
    """A prompt on /dev/tty, or None when the process has no controlling terminal."""
    try:
        with open("/dev/tty", "rb"):
            pass
    except OSError:
        return None
    return _ask_on_tty


async def _ask_on_tty(question: str) -> str | None:
    """getpass in a daemon thread: the loop keeps running, and Ctrl-C still ends the program."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str | None] = loop.create_future()

    def read() -> None:
        try:
            value: str | None = getpass.getpass(question)
        except (EOFError, KeyboardInterrupt, OSError):
            value = None
        with contextlib.suppress(RuntimeError):  # the loop closed while the question was open
            loop.call_soon_threadsafe(_settle, answer, value)

    threading.Thread(target=read, name="passphrase", daemon=True).start()
    return await answer


def _settle(answer: asyncio.Future[str | None], value: str | None) -> None:
    if not answer.done():
        answer.set_result(value)
