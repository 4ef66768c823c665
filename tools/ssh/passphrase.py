"""Passphrases of the operator's private keys: asked when a host accepts the key, once a session.

asyncssh decrypts a protected key only when a server has said it would accept it (as OpenSSH
does), and then calls the `passphrase` callable it was given with the key's file name, from a
worker thread. `KeyPassphrases` is that callable: it asks the face's prompt (on the event loop),
checks the answer against the key, and keeps it in memory for the session's other connections:
never on disk, never in an event. Without a prompt (headless, no terminal), or when the operator
gives up, the key is skipped and the login error says to load it into ssh-agent instead.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncssh

# The face's way to ask: the question in, the answer (None: no answer) out. Never echoed.
PassphrasePrompt = Callable[[str], Awaitable[str | None]]

TRIES = 3  # as OpenSSH's NumberOfPasswordPrompts


class KeyPassphrases:
    """asyncssh's `passphrase` callable for one session's pool."""

    def __init__(self, prompt: PassphrasePrompt | None) -> None:
        self._prompt = prompt
        self._loop: asyncio.AbstractEventLoop | None = None
        self._known: dict[str, str] = {}
        self.unusable: dict[str, str] = {}  # key file -> why it could not be used
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop the prompt runs on (the pool's, taken when it first connects)."""
        self._loop = loop

    def __call__(self, filename: str) -> str:
        """The passphrase of `filename`; raises ValueError, which asyncssh takes as "skip it"."""
        if public_half(filename) is None:
            # asyncssh then wants the passphrase before it knows a host would take the key (and
            # 2.24 cannot use the answer): say how to give the key a public half instead.
            raise asyncssh.KeyImportError(
                f"Passphrase-protected key without a public half ({filename}.pub), so Scout "
                f"cannot tell which host accepts it: load it into ssh-agent (`ssh-add {filename}`) "
                f"or write the public half (`ssh-keygen -y -f {filename} > {filename}.pub`)"
            )
        with self._guard:
            lock = self._locks.setdefault(filename, threading.Lock())
        with lock:  # one question per key, however many hosts want it at once
            if filename in self._known:
                return self._known[filename]
            if filename in self.unusable:
                raise asyncssh.KeyImportError(self.unusable[filename])
            passphrase = self._ask(filename)
            if passphrase is None:
                raise asyncssh.KeyImportError(self.unusable[filename])
            self._known[filename] = passphrase
            return passphrase

    def _ask(self, filename: str) -> str | None:
        if self._prompt is None or self._loop is None:
            self.unusable[filename] = "it needs its passphrase and there is no terminal to ask on"
            return None
        data = Path(filename).read_bytes()
        question = f"Enter passphrase for key '{filename}': "
        for _ in range(TRIES):
            answer = asyncio.run_coroutine_threadsafe(self._prompt(question), self._loop).result()
            if not answer:
                self.unusable[filename] = "no passphrase was given for it"
                return None
            try:
                asyncssh.import_private_key(data, answer)
            except (asyncssh.KeyImportError, asyncssh.KeyEncryptionError):
                question = f"Bad passphrase, try again for '{filename}': "
                continue
            return answer
        self.unusable[filename] = f"its passphrase was wrong {TRIES} times"
        return None


def public_half(path: str | Path) -> asyncssh.SSHKey | None:
    """The key's public half, as asyncssh finds it (FILE.pub, or an OpenSSH-format FILE)."""
    for candidate in (f"{path}.pub", str(path)):
        try:
            return asyncssh.read_public_key(candidate)
        except (OSError, asyncssh.KeyImportError):
            continue
    return None
