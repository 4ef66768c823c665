"""One SSH connection per host, opened on first use and shared by every command after it.

Concurrent first callers share one connect; a jump host's connection carries its workers'
connections (`tunnel=`); each connection runs at most `channels_per_connection` commands at once
(OpenSSH refuses the 11th session), the rest queue. Connecting is retried on transient network
errors; commands never are. A dropped or stuck connection is replaced on the next call.

Limits, per host and for the pool (tested at 64 simulated hosts, 63 of them through one head,
in tests/integration/test_ssh_pool_scale.py, and at 16 real sshd with default settings in
tests/system/test_ssh_pool_scale_real_sshd.py):
- connections: one per host; a host behind a jump host is a direct-tcpip channel on the jump
  host's connection, so N workers behind one head cost the head one TCP connection and N
  forwarded channels. sshd does not count forwarded channels against MaxSessions and its
  MaxStartups throttles new unauthenticated connections, not channels; the pool puts no cap on
  tunnels. Every host connects at first use, all at once; each connect is bounded by
  `connect_timeout` and retried `connect_attempts` times on reset, dropped or timed-out
  connects. A refused one is final, as for OpenSSH's ssh: nothing listens there, and asking
  again a moment later only delays the message (three tries cost four seconds).
- commands: at most `channels_per_connection` (8) sessions per connection at once, below
  OpenSSH's default MaxSessions 10 so that the cancel clean-up (`pkill`, one more session) and
  another client still fit; further commands wait their turn (FIFO). A refused session open
  (a host with a lower MaxSessions) is retried a few times, never the command, then waits
  for a session of ours to end (tools/ssh/scarce_sessions.py).
- memory and descriptors: one socket per directly reached host, none per tunnelled host; output
  is capped per command (OUTPUT_CAP_BYTES in tools/ssh/remote_command.py).

Logging in is as the operator's own ssh does it (tools/ssh/login.py).
"""

from __future__ import annotations

import asyncio
import functools
import os
import socket
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType

import asyncssh
import structlog
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from tools.ssh.errors import (
    AuthError,
    HostKeyError,
    HostUnreachableError,
    SSHError,
    unreachable_message,
)
from tools.ssh.host_keys import HostKeyPolicy, NewHostKeyCallback
from tools.ssh.inventory import HostSpec, Inventory
from tools.ssh.login import login_options, refusal
from tools.ssh.passphrase import KeyPassphrases, PassphrasePrompt
from tools.ssh.remote_command import CommandResult, SessionShortage, new_marker, run_remote
from tools.ssh.scarce_sessions import SessionCount, session_refused
from tools.ssh.wall_server import WallServer
from tools.wall.command import WallSpec, split_sudo

asyncssh.set_log_level("WARNING")
log = structlog.get_logger()

# transient: the network or the server's start-up (MaxStartups drops) may answer next time
RETRYABLE_CONNECT_ERRORS = (
    ConnectionResetError,
    TimeoutError,
    asyncssh.ConnectionLost,
)
CLOSE_WAIT_S = 5.0


class _ScoutClient(asyncssh.SSHClient):
    """Routes unknown host keys to the policy and notices when the connection drops."""

    def __init__(self, spec: HostSpec, policy: HostKeyPolicy) -> None:
        self.spec = spec
        self.policy = policy
        self.refusal: HostKeyError | None = None
        self.lost = False

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        self.refusal = self.policy.decide(self.spec.name, self.spec.address, self.spec.port, key)
        return self.refusal is None

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True


@dataclass
class _Link:
    """A live connection to one host and the channel slots it has."""

    conn: asyncssh.SSHClientConnection
    client: _ScoutClient
    channels: asyncio.Semaphore
    sessions: SessionCount
    dirty: bool = False
    # the wall's fork-server on this connection (tools/ssh/wall_server.py), once started; or
    # why it cannot start here (walled calls then start the helper each)
    wall_server: WallServer | None = None
    wall_server_refused: str | None = None
    wall_server_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def usable(self) -> bool:
        return not (self.dirty or self.client.lost)

    def mark_dirty(self) -> None:
        self.dirty = True


class SSHPool:
    """Pooled, verified SSH connections to the hosts of an inventory."""

    def __init__(
        self,
        inventory: Inventory,
        *,
        trust_new_hosts: bool = False,
        on_new_host_key: NewHostKeyCallback | None = None,
        connect_timeout: float = 10.0,
        channels_per_connection: int = 8,
        keepalive_interval: float = 15,
        connect_attempts: int = 3,
        passphrase_prompt: PassphrasePrompt | None = None,
    ) -> None:
        self.inventory = inventory
        self._policy = HostKeyPolicy(
            inventory.known_hosts_path,
            trust_new_hosts=trust_new_hosts,
            on_new_host_key=on_new_host_key,
        )
        self._connect_timeout = connect_timeout
        self._channels_per_connection = channels_per_connection
        self._keepalive_interval = keepalive_interval
        self._connect_attempts = connect_attempts
        self._passphrases = KeyPassphrases(passphrase_prompt)
        self._links: dict[str, _Link] = {}
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    async def __aenter__(self) -> SSHPool:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def run(
        self,
        host: str,
        command: str,
        *,
        timeout: float = 120.0,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        shell: bool = True,
        wall: WallSpec | None = None,
    ) -> CommandResult:
        """Run `command` once on `host`, killed on the host after `timeout` seconds (without
        `shell`: one simple command, not under `sh -c`; see remote_command.wrap_command;
        with `wall`: inside the wall, tools/wall/)."""
        link = await self._link(host)
        try:
            server = None
            if wall is not None and shell and not split_sudo(command)[0]:
                server = await self._wall_server(link, host)
            if server is not None:
                marker = new_marker()
                return await server.run(
                    host, command, timeout=timeout, cwd=cwd, env=env, wall=wall, marker=marker
                )
            async with link.sessions.held():
                return await run_remote(
                    link.conn,
                    host,
                    command,
                    timeout=timeout,
                    cwd=cwd,
                    env=env,
                    on_stuck_channel=link.mark_dirty,
                    shortage=SessionShortage(
                        functools.partial(session_refused, link, host),
                        functools.partial(self._run_on_a_connection_of_its_own, host),
                    ),
                    shell=shell,
                    wall=wall,
                )
        except asyncssh.ChannelOpenError as exc:
            raise SSHError(
                f"{host} refused to open a session: {exc.reason}. The command did not run; "
                "the host may limit sessions (sshd MaxSessions) or be overloaded; try again."
            ) from None
        except (asyncssh.DisconnectError, OSError) as exc:
            link.mark_dirty()
            raise HostUnreachableError(
                f"lost the connection to {host} ({link.client.spec.endpoint}) while running "
                f"the command: {_reason(exc)}. It may or may not have run; check before "
                "running it again. Scout reconnects on the next call."
            ) from None

    async def wall_server(self, host: str) -> WallServer | None:
        """The fork-server of the wall on the connection to `host`, started if need be; None
        where it cannot run there."""
        link = await self._link(host)
        try:
            return await self._wall_server(link, host)
        except (asyncssh.DisconnectError, OSError):
            link.mark_dirty()
            return None

    async def _wall_server(self, link: _Link, host: str) -> WallServer | None:
        """The connection's fork-server, started on first use; None where it cannot start (the
        call then starts the helper itself, which builds the same wall or refuses)."""
        async with link.wall_server_lock:
            if link.wall_server is not None and not link.wall_server.ended:
                return link.wall_server
            if link.wall_server is not None:  # ended with no call running: its slot is free
                link.wall_server = None
                link.channels.release()
            if link.wall_server_refused is not None:
                return None
            await link.channels.acquire()  # the server's channel keeps one session for good
            try:
                started = await WallServer.start(link.conn, host)
            except asyncssh.ChannelOpenError as exc:  # sessions full for now: per call, this time
                link.channels.release()
                log.info("ssh.wall_server_not_started", host=host, reason=exc.reason)
                return None
            if isinstance(started, str):
                link.channels.release()
                log.info("ssh.wall_server_refused", host=host, reason=started)
                link.wall_server_refused = started
                return None
            link.wall_server = started
            return started

    async def _run_on_a_connection_of_its_own(self, host: str, command: str) -> None:
        """Best effort: `command` on a new connection to `host`, closed after it. For the
        clean-up of a cancelled command on a host that allows one session per connection:
        the command still holds the pooled connection's only one."""
        spec = self.inventory.get(host)
        try:
            link = await self._connect(spec, await self._jump_connection(spec))
        except SSHError as exc:
            log.warning("ssh.cleanup_connection_failed", host=host, error=str(exc))
            return
        try:
            await asyncio.wait_for(link.conn.run(command, stdin=asyncssh.DEVNULL), CLOSE_WAIT_S)
        finally:
            link.conn.close()

    async def connection(self, host: str) -> asyncssh.SSHClientConnection:
        """The pooled connection to `host`, opened (through its jump host) if needed."""
        return (await self._link(host)).conn

    async def close(self) -> None:
        """Close every connection, targets before the jump hosts that carry them."""
        links = sorted(self._links.items(), key=lambda item: item[1].client.spec.jump is None)
        self._links.clear()
        for _, link in links:
            link.conn.close()
        for name, link in links:
            try:
                await asyncio.wait_for(link.conn.wait_closed(), CLOSE_WAIT_S)
            except TimeoutError:
                log.warning("ssh.close_timeout", host=name)

    async def _link(self, name: str) -> _Link:
        spec = self.inventory.get(name)
        async with self._locks[name]:
            link = self._links.get(name)
            if link is not None and link.usable:
                return link
            if link is not None:
                log.info("ssh.reconnect", host=name, dirty=link.dirty, lost=link.client.lost)
                link.conn.close()
                del self._links[name]
            tunnel = await self._jump_connection(spec)
            link = await self._connect(spec, tunnel)
            self._links[name] = link
            return link

    async def _jump_connection(self, spec: HostSpec) -> asyncssh.SSHClientConnection | None:
        if spec.jump is None:
            return None
        try:
            return await self.connection(spec.jump)
        except SSHError as exc:
            raise type(exc)(f"cannot reach {spec.name} through {spec.jump}: {exc}") from None

    async def _connect(self, spec: HostSpec, tunnel: asyncssh.SSHClientConnection | None) -> _Link:
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(RETRYABLE_CONNECT_ERRORS),
            stop=stop_after_attempt(self._connect_attempts),
            wait=wait_exponential_jitter(multiplier=0.2, max=2.0, jitter=0.2),
            before_sleep=_log_retry(spec),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await self._connect_once(spec, tunnel)
        except asyncssh.DisconnectError as exc:
            # sshd ends a login past MaxAuthTries with "Too many authentication failures"
            if isinstance(exc, asyncssh.PermissionDenied) or "authentication" in exc.reason:
                raise AuthError(refusal(spec, exc.reason, self._passphrases)) from None
            raise HostUnreachableError(unreachable_message(spec, _reason(exc))) from None
        except asyncssh.ChannelOpenError as exc:
            raise HostUnreachableError(unreachable_message(spec, exc.reason)) from None
        except OSError as exc:
            raise HostUnreachableError(unreachable_message(spec, _reason(exc))) from None
        raise AssertionError("unreachable: tenacity reraises the last error")

    async def _connect_once(
        self, spec: HostSpec, tunnel: asyncssh.SSHClientConnection | None
    ) -> _Link:
        client = _ScoutClient(spec, self._policy)
        self._passphrases.bind(asyncio.get_running_loop())
        try:
            async with login_options(spec, self._passphrases) as login:
                conn = await asyncssh.connect(
                    spec.address,
                    spec.port,
                    tunnel=tunnel,
                    username=spec.user,
                    client_factory=lambda: client,
                    known_hosts=self._policy.known_hosts(),
                    connect_timeout=self._connect_timeout,
                    keepalive_interval=self._keepalive_interval,
                    keepalive_count_max=3,
                    **login,
                )
        except asyncssh.HostKeyNotVerifiable as exc:
            raise client.refusal or HostKeyError(
                f"host key of {spec.name} ({spec.endpoint}) was refused: {exc.reason}"
            ) from None
        except (FileNotFoundError, PermissionError, asyncssh.KeyImportError) as exc:
            fix = "" if "ssh-add" in str(exc) else " Set `identity_file` to a readable private key."
            raise AuthError(
                f"cannot use identity file {spec.identity_file} for {spec.name}: {exc}.{fix}"
            ) from None
        channels = asyncio.Semaphore(self._channels_per_connection)
        return _Link(conn, client, channels, SessionCount(channels))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    if isinstance(exc, socket.gaierror):
        return f"the name does not resolve ({exc.strerror})"
    if isinstance(exc, asyncssh.DisconnectError):
        return exc.reason
    if isinstance(exc, OSError) and exc.errno:
        return os.strerror(exc.errno)  # asyncio's own strerror is "Connect call failed (…)"
    return str(exc) or type(exc).__name__


def _log_retry(spec: HostSpec) -> Callable[[RetryCallState], None]:
    def before_sleep(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        log.warning(
            "ssh.connect_retry",
            host=spec.name,
            endpoint=spec.endpoint,
            attempt=state.attempt_number,
            error=_reason(error) if error else None,
        )

    return before_sleep
