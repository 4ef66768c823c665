"""Hosts whose sshd allows few sessions per connection (`MaxSessions 1` or 2), over real OpenSSH.

The pool keeps the wall's fork-server on a channel of its own for as long as the connection
lives (tools/ssh/wall_server.py). On such a host that channel takes the session every other
command needs: each test here makes a walled read first, so the server holds its session, then
needs another one (a plain command, the clean-up of a cancelled command) on the same pooled
connection, and must get it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.processes import sleepers
from tests.support.sshd import (
    SSHD,
    SshdDidNotStart,
    new_key,
    wait_until_listening,
    write_sshd_config,
)
from tests.support.waiting import WAIT_S, until
from tools.jobs.host import job_status, start_job, stop_jobs
from tools.ssh import Inventory, SSHPool
from tools.ssh.scarce_sessions import SessionCount
from tools.wall import WallSpec
from tools.wall.host_landlock import landlock_abi

pytestmark = pytest.mark.system
WALL = WallSpec(scratch=True)
PORT_TRIES = 5


@dataclass
class ScarceHost:
    """One sshd on loopback with a given MaxSessions, and an inventory that reaches it."""

    max_sessions: int
    port: int
    client_key: Path
    known_hosts: Path
    wall_dir: Path

    def wall_servers(self) -> list[int]:
        """The wall's fork-servers of this sshd: python processes serving from its folder."""
        found = []
        for entry in Path("/proc").iterdir():
            with contextlib.suppress(OSError):
                words = (entry / "cmdline").read_bytes().split(b"\0")
                if words[-2:] == [b"serve", b""] and str(self.wall_dir).encode() in words[-3]:
                    found.append(int(entry.name))
        return found

    def inventory(self) -> Inventory:
        return Inventory.from_dict(
            {
                "known_hosts": str(self.known_hosts),
                "defaults": {"user": "root", "identity_file": str(self.client_key)},
                "hosts": {"scarce": {"address": "127.0.0.1", "port": self.port}},
            }
        )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start(root: Path, max_sessions: int, client_pub: Path) -> tuple[subprocess.Popen[bytes], int]:
    """`sshd -D` on a free loopback port (another is tried when one is taken meanwhile)."""
    key = root / "host_ed25519"
    new_key(key)
    for _ in range(PORT_TRIES):
        port = _free_port()
        pid_file, log = root / "sshd.pid", root / "sshd.log"
        log.unlink(missing_ok=True)
        config = write_sshd_config(
            root / "sshd_config",
            listen="127.0.0.1",
            port=port,
            host_key=key,
            pid_file=pid_file,
            authorized_keys=client_pub,
            host_state=root,
            extra=[f"MaxSessions {max_sessions}"],
        )
        sshd = subprocess.Popen(
            [str(SSHD), "-D", "-f", str(config), "-E", str(log)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            wait_until_listening(pid_file, log, sshd)
            return sshd, port
        except SshdDidNotStart as exc:
            sshd.wait()
            if "Address already in use" not in str(exc):
                raise
    raise SshdDidNotStart(f"every one of {PORT_TRIES} free ports was taken before sshd bound it")


@pytest.fixture(params=[1, 2], ids=["MaxSessions-1", "MaxSessions-2"])
def scarce_host(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ScarceHost]:
    if os.geteuid() != 0 or not SSHD.exists() or landlock_abi() < 1:
        pytest.skip("needs root, OpenSSH's sshd and a kernel with Landlock")
    root = tmp_path / f"sessions-sshd-{request.param}"
    root.mkdir()
    client_key = root / "id_ed25519"
    new_key(client_key)
    Path("/run/sshd").mkdir(parents=True, exist_ok=True)
    sshd, port = _start(root, request.param, client_key.with_suffix(".pub"))
    try:
        host_key_pub = " ".join((root / "host_ed25519.pub").read_text().split()[:2])
        known_hosts = root / "known_hosts"
        known_hosts.write_text(f"[127.0.0.1]:{port} {host_key_pub}\n")
        yield ScarceHost(request.param, port, client_key, known_hosts, root / "wall")
    finally:
        sshd.terminate()
        sshd.wait()
        shutil.rmtree(root / "wall", ignore_errors=True)


async def test_a_plain_command_after_a_walled_read_gets_a_session(scarce_host: ScarceHost) -> None:
    async with SSHPool(scarce_host.inventory()) as pool:
        first = await pool.run("scarce", 'echo "$SCOUT_WALL"', wall=WALL)
        assert first.walled and "landlock-abi-" in first.stdout
        assert len(scarce_host.wall_servers()) == 1
        plain = await pool.run("scarce", "echo plain")
        assert (plain.exit_status, plain.stdout) == (0, "plain\n")
        again = await pool.run("scarce", 'echo "$SCOUT_WALL"; touch /etc/scout-sessions', wall=WALL)
        assert again.walled and "landlock-abi-" in again.stdout
        assert "Permission denied" in again.stderr and not Path("/etc/scout-sessions").exists()
        # where the server gave its session up, walled calls start the helper each from now on
        assert len(scarce_host.wall_servers()) == scarce_host.max_sessions - 1
        assert (await pool.run("scarce", "echo plain")).stdout == "plain\n"


async def test_more_commands_at_once_than_sessions_wait_for_one_and_all_run(
    scarce_host: ScarceHost,
) -> None:
    """Five commands at once on one connection that allows one or two sessions: each runs in
    turn, none is refused (before, a command still waiting after the few quick retries of its
    open, about a second, failed)."""
    async with SSHPool(scarce_host.inventory()) as pool:
        assert (await pool.run("scarce", "true", wall=WALL)).walled
        results = await asyncio.gather(
            *(pool.run("scarce", f"sleep 1.5; echo {n}") for n in range(3)),
            *(pool.run("scarce", f"echo walled {n}", wall=WALL) for n in range(2)),
        )
    assert [r.stdout for r in results] == ["0\n", "1\n", "2\n", "walled 0\n", "walled 1\n"]
    assert all(r.walled for r in results[3:])


async def test_walled_calls_running_on_the_server_finish_before_it_gives_way(
    scarce_host: ScarceHost,
) -> None:
    seconds = f"2.{uuid.uuid4().int % 10_000}"
    async with SSHPool(scarce_host.inventory()) as pool:
        assert (await pool.run("scarce", "true", wall=WALL)).walled
        assert len(scarce_host.wall_servers()) == 1
        walled = asyncio.create_task(pool.run("scarce", f"sleep {seconds}; echo read", wall=WALL))
        await until(lambda: sleepers(seconds), "the walled read to run on the host")
        plain = await pool.run("scarce", "echo plain")
        read = await walled
    assert (read.walled, read.exit_status, read.stdout) == (True, 0, "read\n")
    assert (plain.exit_status, plain.stdout) == (0, "plain\n")


async def test_a_cancelled_command_is_ended_on_the_host_after_a_walled_read(
    scarce_host: ScarceHost,
) -> None:
    seconds = f"600.{uuid.uuid4().int % 10_000}"
    command = f"setsid sleep {seconds} >/dev/null 2>&1 < /dev/null & sleep {seconds}"
    async with SSHPool(scarce_host.inventory()) as pool:
        assert (await pool.run("scarce", "true", wall=WALL)).walled
        call = asyncio.create_task(pool.run("scarce", command))
        try:
            await until(lambda: len(sleepers(seconds)) == 2, "both sleeps to run on the host")
        finally:
            call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await until(lambda: not sleepers(seconds), "both sleeps to end")


async def test_waiters_do_not_wait_for_each_other() -> None:
    """Two refused calls and nothing else running on the connection (a session held by
    something the pool does not count): neither waits for the other; both give up and say
    the host refused."""
    count = SessionCount(asyncio.Semaphore(8))
    answers: list[bool] = []

    async def refused_call() -> None:
        async with count.held():
            await asyncio.sleep(0)  # both hold a slot before either is refused
            answers.append(await count.another_ended())

    await asyncio.wait_for(asyncio.gather(refused_call(), refused_call()), WAIT_S)
    assert sorted(answers) == [False, True]  # the second gives up; the first then hears it end


async def test_a_resident_job_reader_does_not_keep_the_session_from_a_command(
    scarce_host: ScarceHost,
) -> None:
    """A job status poll leaves a reader resident on the server (tools/jobs/walled_read.py),
    a call with no time limit: the server gives way without waiting for it (before, the next
    plain command waited for the reader to end, which it never does), and polls go on."""
    name = f"scarce-{uuid.uuid4().hex[:8]}"
    async with SSHPool(scarce_host.inventory()) as pool:
        await start_job(pool, "scarce", name, "echo polled; sleep 60")
        try:
            await until(
                lambda: _logged(pool, name), f"job {name} to log its line through the reader"
            )
            plain = await asyncio.wait_for(pool.run("scarce", "echo plain"), WAIT_S)
            after = (await job_status(pool, "scarce", [name]))[1]
        finally:
            await stop_jobs(pool, "scarce", [name], grace_s=1)
    assert (plain.exit_status, plain.stdout) == (0, "plain\n")
    assert (after[0].name, after[0].state) == (name, "running")


async def _logged(pool: SSHPool, name: str) -> bool:
    records = (await job_status(pool, "scarce", [name]))[1]
    return bool(records and records[0].tail)
