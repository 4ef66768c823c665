"""SSHPool against real SSH servers on loopback: reuse, jumps, channel caps, host keys, errors."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import asyncssh
import pytest

from tests.support.asyncssh_hosts import LocalHosts
from tests.support.waiting import until
from tools.ssh import (
    AuthError,
    HostKeyError,
    HostUnreachableError,
    SSHPool,
    UnknownHostError,
    remote_command,
)
from tools.ssh.remote_command import run_remote


@pytest.fixture
async def local_hosts(tmp_path: Path) -> AsyncIterator[LocalHosts]:
    hosts = LocalHosts(tmp_path)
    try:
        yield hosts
    finally:
        await hosts.close()


async def test_many_calls_share_one_connection(local_hosts: LocalHosts) -> None:
    host = await local_hosts.add("spark-a")
    local_hosts.write_known_hosts("spark-a")
    async with SSHPool(local_hosts.inventory()) as pool:
        first = await asyncio.gather(*(pool.run("spark-a", "echo $((6*7))") for _ in range(5)))
        later = [await pool.run("spark-a", "echo $SCOUT_TEST_HOST") for _ in range(3)]

    assert [r.stdout for r in first] == ["42\n"] * 5
    assert [r.stdout for r in later] == ["spark-a\n"] * 3
    assert host.connections == 1


async def test_cwd_env_and_exit_status(local_hosts: LocalHosts, tmp_path: Path) -> None:
    await local_hosts.add("h")
    local_hosts.write_known_hosts("h")
    async with SSHPool(local_hosts.inventory()) as pool:
        result = await pool.run(
            "h", "pwd; echo \"$GREETING\"; echo oops >&2; exit 3", cwd=str(tmp_path),
            env={"GREETING": "it's a 'quoted' $value"},
        )  # fmt: skip
    assert result.stdout == f"{tmp_path}\nit's a 'quoted' $value\n"
    assert result.stderr == "oops\n"
    assert (result.exit_status, result.timed_out, result.ok) == (3, False, False)


async def test_worker_is_reached_through_its_jump_host(local_hosts: LocalHosts) -> None:
    head = await local_hosts.add("head")
    worker = await local_hosts.add("worker")
    local_hosts.write_known_hosts("head", "worker")
    async with SSHPool(local_hosts.inventory(jumps={"worker": "head"})) as pool:
        results = await asyncio.gather(
            *(pool.run("worker", "echo $SCOUT_TEST_HOST") for _ in range(4))
        )
        await pool.run("head", "true")

    assert {r.stdout for r in results} == {"worker\n"}
    assert head.tunnels == 1  # one tunnel carries the worker's one connection
    assert (head.connections, worker.connections) == (1, 1)


async def test_twenty_commands_on_a_ten_session_host_all_succeed(local_hosts: LocalHosts) -> None:
    host = await local_hosts.add("busy", max_sessions=10)
    local_hosts.write_known_hosts("busy")
    async with SSHPool(local_hosts.inventory()) as pool:
        results = await asyncio.gather(
            *(pool.run("busy", f"sleep 0.2; echo {i}") for i in range(20))
        )
    assert [r.stdout for r in results] == [f"{i}\n" for i in range(20)]
    assert host.refused_sessions == 0
    assert host.peak_sessions == 8


async def test_changed_host_key_is_refused(local_hosts: LocalHosts) -> None:
    host = await local_hosts.add("spark-a")
    impostor = await local_hosts.add("impostor")
    local_hosts.known_hosts_path.write_text(
        impostor.known_hosts_line().replace(str(impostor.port), str(host.port)) + "\n"
    )
    recorded: list[tuple[str, str]] = []
    pool = SSHPool(
        local_hosts.inventory(), trust_new_hosts=True, on_new_host_key=lambda *a: recorded.append(a)
    )
    with pytest.raises(HostKeyError) as caught:
        await pool.run("spark-a", "true")
    await pool.close()

    message = str(caught.value)
    assert message.startswith(f"HOST KEY CHANGED for spark-a (127.0.0.1:{host.port})")
    assert impostor.host_key.get_fingerprint("sha256") in message  # the old, recorded key
    assert host.host_key.get_fingerprint("sha256") in message  # the new, presented key
    assert f"ssh-keygen -R '[127.0.0.1]:{host.port}'" in message
    assert recorded == []


async def test_unknown_host_key_is_refused_without_trust(local_hosts: LocalHosts) -> None:
    host = await local_hosts.add("spark-a")
    async with SSHPool(local_hosts.inventory()) as pool:
        with pytest.raises(HostKeyError) as caught:
            await pool.run("spark-a", "true")
    message = str(caught.value)
    assert "unknown host key for spark-a" in message
    assert host.host_key.get_fingerprint("sha256") in message
    assert "--trust-new-hosts" in message and "ssh-keyscan" in message
    assert not local_hosts.known_hosts_path.exists()


async def test_trust_new_hosts_records_the_key(local_hosts: LocalHosts) -> None:
    host = await local_hosts.add("spark-a")
    recorded: list[tuple[str, str]] = []
    async with SSHPool(
        local_hosts.inventory(), trust_new_hosts=True, on_new_host_key=lambda *a: recorded.append(a)
    ) as pool:
        assert (await pool.run("spark-a", "echo hi")).stdout == "hi\n"

    fingerprint = host.host_key.get_fingerprint("sha256")
    assert recorded == [("spark-a", fingerprint)]
    assert local_hosts.known_hosts_path.read_text().startswith(host.known_hosts_line())
    async with SSHPool(local_hosts.inventory()) as strict_pool:  # now known without trusting
        assert (await strict_pool.run("spark-a", "echo again")).stdout == "again\n"


async def test_unreachable_host_has_a_clear_message(
    local_hosts: LocalHosts, closed_port: int
) -> None:
    port = closed_port
    inventory = local_hosts.inventory(gone={"address": "127.0.0.1", "port": port, "user": "tester"})
    async with SSHPool(inventory, connect_attempts=2) as pool:
        with pytest.raises(HostUnreachableError) as caught:
            await pool.run("gone", "true")
    assert str(caught.value).startswith(
        f"cannot reach gone (127.0.0.1:{port}): Connection refused; check that the host is up"
    )


async def test_unreachable_behind_jump_names_the_jump(
    local_hosts: LocalHosts, closed_port: int
) -> None:
    await local_hosts.add("head")
    local_hosts.write_known_hosts("head")
    port = closed_port
    inventory = local_hosts.inventory(
        worker={"address": "127.0.0.1", "port": port, "user": "tester", "jump": "head"}
    )
    async with SSHPool(inventory) as pool:
        with pytest.raises(HostUnreachableError) as caught:
            await pool.run("worker", "true")
    message = str(caught.value)
    assert message.startswith(f"cannot reach worker (127.0.0.1:{port}) through head: ")
    assert "reachable from head" in message


async def test_unknown_host_and_bad_login(local_hosts: LocalHosts, tmp_path: Path) -> None:
    host = await local_hosts.add("a")
    local_hosts.write_known_hosts("a")
    other_key = tmp_path / "other_key"
    other_key.write_bytes(asyncssh.generate_private_key("ssh-ed25519").export_private_key())
    inventory = local_hosts.inventory(
        stranger={"address": "127.0.0.1", "port": host.port, "identity_file": str(other_key)}
    )
    async with SSHPool(inventory) as pool:
        with pytest.raises(UnknownHostError, match=r"'b'.*defines: a, stranger"):
            await pool.run("b", "true")
        with pytest.raises(AuthError, match=r"stranger .* refused login as 'tester'"):
            await pool.run("stranger", "true")


async def test_dropped_connection_is_reopened_on_next_call(local_hosts: LocalHosts) -> None:
    host = await local_hosts.add("a")
    local_hosts.write_known_hosts("a")
    async with SSHPool(local_hosts.inventory()) as pool:
        assert (await pool.run("a", "echo 1")).stdout == "1\n"
        host.server_conns[0].abort()
        await asyncio.sleep(0.05)
        assert (await pool.run("a", "echo 2")).stdout == "2\n"
    assert host.connections == 2


@pytest.mark.slow
async def test_timeout_kills_the_command_on_the_host(local_hosts: LocalHosts) -> None:
    await local_hosts.add("a")
    local_hosts.write_known_hosts("a")
    async with SSHPool(local_hosts.inventory()) as pool:
        result = await pool.run("a", "echo started; sleep 59.1234", timeout=5)
        leftovers = await pool.run("a", "pgrep -f 'sleep 59[.]1234' || echo none")
    assert result.timed_out and result.exit_status == 124
    assert result.stdout == "started\n"
    assert leftovers.stdout == "none\n"


async def _cancel_once_running(
    pool: SSHPool, command: str, running: str, left: str, *, shell: bool = True
) -> tuple[str, str]:
    """Start `command` on host a and cancel the call once `pgrep -f running` sees it; what that
    pgrep printed, and what `pgrep -f left` finds afterwards ("none" when nothing is left)."""
    task = asyncio.create_task(pool.run("a", command, timeout=300, shell=shell))

    async def runs() -> str:
        return (await pool.run("a", f"pgrep -f '{running}' || true")).stdout

    probe = await until(runs, f"{running!r} to run on the host")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    leftovers = await pool.run("a", f"pgrep -f '{left}' || echo none")
    return probe, leftovers.stdout


async def test_cancelled_command_is_stopped_on_the_host(local_hosts: LocalHosts) -> None:
    await local_hosts.add("a")
    local_hosts.write_known_hosts("a")
    async with SSHPool(local_hosts.inventory()) as pool:
        pattern = "sleep 58[.]4321"
        _, leftovers = await _cancel_once_running(pool, "sleep 58.4321", pattern, pattern)
    assert leftovers == "none\n"


async def test_a_command_without_sh_gets_its_env_and_dies_at_its_timeout(
    local_hosts: LocalHosts,
) -> None:
    await local_hosts.add("a")
    local_hosts.write_known_hosts("a")
    async with SSHPool(local_hosts.inventory()) as pool:
        said = await pool.run(
            "a", "printenv GREETING", env={"GREETING": "it's 'quoted' $HOME"}, shell=False
        )
        result = await pool.run("a", "sleep 52.4321", timeout=1, shell=False)
        leftovers = await pool.run("a", "pgrep -f 'sleep 52[.]4321' || echo none")
    assert said.stdout == "it's 'quoted' $HOME\n"
    assert result.timed_out and result.exit_status == 124
    assert leftovers.stdout == "none\n"


async def test_a_cancelled_command_without_sh_is_stopped_by_its_marker(
    local_hosts: LocalHosts,
) -> None:
    """No shell carries the run's marker here: only the environment `timeout` and the command
    were started with."""
    await local_hosts.add("a")
    local_hosts.write_known_hosts("a")
    async with SSHPool(local_hosts.inventory()) as pool:
        probe, leftovers = await _cancel_once_running(
            pool, "sleep 51.4321", "^sleep 51[.]4321", "51[.]4321", shell=False
        )
    assert probe
    assert leftovers == "none\n"


async def test_a_cancelled_nested_timeout_dies_with_the_commands_session(
    local_hosts: LocalHosts,
) -> None:
    """GNU timeout takes a process group of its own, so only the session holds it and its child."""
    await local_hosts.add("a")
    local_hosts.write_known_hosts("a")
    async with SSHPool(local_hosts.inventory()) as pool:
        nested = "timeout 600 sh -c 'sleep 57.4321'"
        probe, leftovers = await _cancel_once_running(pool, nested, "^sleep 57[.]4321", "57[.]4321")
    assert probe
    assert leftovers == "none\n"


@pytest.mark.slow
async def test_a_timed_out_nested_timeout_dies_with_the_commands_session(
    local_hosts: LocalHosts, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wrapper's own `timeout` ends only its group; the nested one keeps the channel open
    until Scout's local deadline, and then the session is stopped by the run's marker."""
    monkeypatch.setattr(remote_command, "LOCAL_GRACE_S", 1.0)
    await local_hosts.add("a")
    local_hosts.write_known_hosts("a")
    async with SSHPool(local_hosts.inventory()) as pool:
        result = await pool.run("a", "timeout 600 sh -c 'sleep 55.4321'", timeout=1)
        leftovers = await pool.run("a", "pgrep -f '55[.]4321' || echo none")
    assert result.timed_out
    assert leftovers.stdout == "none\n"


async def test_output_is_capped_on_the_way_in(local_hosts: LocalHosts) -> None:
    await local_hosts.add("a")
    local_hosts.write_known_hosts("a")
    async with SSHPool(local_hosts.inventory()) as pool:
        link = await pool.connection("a")
        result = await run_remote(
            link, "a", "head -c 300000 /dev/zero | tr '\\0' x; echo END", timeout=30,
            output_cap=100_000,
        )  # fmt: skip
    assert result.stdout_omitted_bytes == 300_004 - 100_000
    assert result.stdout.startswith("x" * 50_000 + "\n[... 200004 bytes dropped")
    assert result.stdout.endswith("xxEND\n")
