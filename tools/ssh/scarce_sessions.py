"""Hosts whose sshd allows fewer sessions per connection than the pool opens (`MaxSessions 1`
or 2 in sshd_config; OpenSSH's default is 10).

sshd counts sessions per connection, and only Scout's commands use a pooled connection, so a
session open refused after the short retries (tools/ssh/remote_command.py) means our own
sessions fill the host's limit. Two of them can make room: the wall's fork-server
(tools/ssh/wall_server.py), which keeps one session for as long as the connection lives, gives
it up for good on that connection (walled calls then start the helper per call, as where the
server cannot start), after the walled calls running on it have ended; otherwise the refused
call waits for another command on the connection to end. Where nothing of ours holds a
session, the refusal stands and the caller says so. Tested over real sshd with MaxSessions 1
and 2 in tests/system/test_scarce_sessions.py.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Protocol

import structlog

from tools.ssh.wall_server import WallServer

log = structlog.get_logger()
# why a connection's walled calls start the helper each time once its server gave way
SESSIONS_SCARCE = "the host allows too few sessions per connection (sshd MaxSessions) to keep one"


class SessionCount:
    """The commands holding a session of their own on one connection, and news of each end."""

    def __init__(self, channels: asyncio.Semaphore) -> None:
        self._channels = channels
        self._running = 0
        self._waiting = 0  # of those, the ones waiting in another_ended (they hold no session)
        self._ended = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        """A channel slot of the connection (FIFO), counted while the command runs."""
        async with self._channels:
            self._running += 1
            try:
                yield
            finally:
                async with self._ended:
                    self._running -= 1
                    self._ended.notify_all()

    async def another_ended(self) -> bool:
        """Wait until another command on the connection ends; False at once where none but the
        caller (counted in held()) and other waiters is running: waiting for waiters would
        never end."""
        async with self._ended:
            if self._running - self._waiting <= 1:
                return False
            self._waiting += 1
            try:
                await self._ended.wait()
            finally:
                self._waiting -= 1
            return True


class ServerSlot(Protocol):
    """What a pooled connection keeps about its fork-server (tools/ssh/pool.py, _Link)."""

    channels: asyncio.Semaphore
    sessions: SessionCount
    wall_server: WallServer | None
    wall_server_refused: str | None
    wall_server_lock: asyncio.Lock


async def session_refused(link: ServerSlot, host: str) -> bool:
    """sshd still refuses a session on `link`: True once one may be free (the open is then
    worth another try), False where nothing of ours holds one."""
    if await wall_server_gives_way(link, host):
        return True
    return await link.sessions.another_ended()


async def wall_server_gives_way(link: ServerSlot, host: str) -> bool:
    """Where the fork-server holds a session, end it once the calls on it have ended (new
    walled calls wait on the lock, then start the helper per call) and keep it from starting
    again on this connection. True when it ended the server: its session is free now."""
    async with link.wall_server_lock:
        server = link.wall_server
        if server is None or server.ended:  # an ended one's session is free already
            return False
        link.wall_server, link.wall_server_refused = None, SESSIONS_SCARCE
        log.info("ssh.wall_server_gives_way", host=host, reason=SESSIONS_SCARCE)
        await server.stop()
        link.channels.release()
        return True
