"""Scout's SSH against real OpenSSH: a head reachable from here, a worker only through it."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from agent.safety.shell.judge import judge_shell
from tests.support.sshd_topology import Topology
from tests.support.waiting import until
from tools.base import ToolContext
from tools.ssh import HostKeyError, HostUnreachableError, Inventory, SSHPool, remote_command
from tools.ssh_exec import SSHExec, SSHExecInput

pytestmark = pytest.mark.system


def inventory(topology: Topology, **changes: object) -> Inventory:
    return Inventory.from_dict({**topology.inventory_data(), **changes})


async def test_ssh_exec_reaches_the_worker_through_the_head(
    sshd_topology: Topology, tmp_path: Path
) -> None:
    async with SSHPool(inventory(sshd_topology)) as pool:
        result = await SSHExec(pool, judge_shell).run(
            SSHExecInput(hosts=["head", "worker"], command="hostname; echo $SSH_CONNECTION"),
            ToolContext(spill_dir=tmp_path),
        )
    assert not result.is_error, result.text
    head_section, worker_section = result.text.split("\n\n")
    assert head_section.startswith("== head (exit 0, ")
    assert head_section.split("\n")[1] == "head"
    assert worker_section.startswith("== worker (exit 0, ")
    worker_name, connection = worker_section.split("\n")[1:3]
    assert worker_name == "worker"
    assert connection.startswith("192.168.201.1 ")  # the connection came from the head


async def test_direct_connect_to_the_worker_fails_clearly(sshd_topology: Topology) -> None:
    data = sshd_topology.inventory_data(worker_jump=None)
    async with SSHPool(Inventory.from_dict(data), connect_timeout=5) as pool:
        with pytest.raises(HostUnreachableError) as caught:
            await pool.run("worker", "true")
    assert str(caught.value).startswith(
        f"cannot reach worker ({sshd_topology.worker.address}:22): No route to host; check"
    )


async def test_hung_command_is_killed_on_its_host(sshd_topology: Topology, tmp_path: Path) -> None:
    sleeper = f"sleep 600.{os.getpid()}"
    async with SSHPool(inventory(sshd_topology)) as pool:
        result = await SSHExec(pool, judge_shell).run(
            SSHExecInput(host="worker", command=f"echo going; {sleeper}", timeout=5),
            ToolContext(spill_dir=tmp_path),
        )
        seen_over_ssh = await pool.run("worker", f"ps -eo args | grep -c '^{sleeper}' || true")
    assert result.is_error
    assert "== worker (timed out after 5 s, " in result.text
    assert result.text.endswith("Partial output follows.\ngoing")
    assert seen_over_ssh.stdout == "0\n"
    assert not any(
        sleeper in line for line in sshd_topology.namespace_commands(sshd_topology.worker)
    )


async def test_cancelled_command_leaves_nothing_on_the_host(sshd_topology: Topology) -> None:
    sleeper = f"sleep 599.{os.getpid()}"
    async with SSHPool(inventory(sshd_topology)) as pool:
        task = asyncio.create_task(pool.run("worker", sleeper, timeout=600))
        await until(
            lambda: sleeper in sshd_topology.namespace_commands(sshd_topology.worker),
            f"{sleeper!r} to run on the worker",
        )
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        after = await pool.run("worker", "echo still-usable")
    assert after.stdout == "still-usable\n"
    assert not any(
        sleeper in line for line in sshd_topology.namespace_commands(sshd_topology.worker)
    )


async def test_a_cancelled_nested_timeout_leaves_no_process(sshd_topology: Topology) -> None:
    """GNU timeout takes a process group of its own: only the channel's session (sshd's setsid)
    still holds the inner `timeout` and its `sleep`, and that is what a cancel kills."""
    sleeper = f"sleep 598.{os.getpid()}"
    nested = f"timeout 600 sh -c '{sleeper}'"
    async with SSHPool(inventory(sshd_topology)) as pool:
        task = asyncio.create_task(pool.run("worker", nested, timeout=600))
        await until(
            lambda: sleeper in sshd_topology.namespace_commands(sshd_topology.worker),
            f"{sleeper!r} to run on the worker",
        )
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        after = await pool.run("worker", "echo still-usable")
    assert after.stdout == "still-usable\n"
    left = sshd_topology.namespace_commands(sshd_topology.worker)
    assert not [line for line in left if sleeper in line], left


async def test_a_timed_out_nested_timeout_leaves_no_process(
    sshd_topology: Topology, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wrapper's `timeout` ends its own group only; what is left holds the channel until
    Scout's local deadline, then dies with the session, found by the run's environment."""
    monkeypatch.setattr(remote_command, "LOCAL_GRACE_S", 1.0)
    sleeper = f"sleep 597.{os.getpid()}"
    async with SSHPool(inventory(sshd_topology)) as pool:
        result = await pool.run("worker", f"timeout 600 sh -c '{sleeper}'", timeout=1)
    assert result.timed_out
    left = sshd_topology.namespace_commands(sshd_topology.worker)
    assert not [line for line in left if sleeper in line], left


async def test_twenty_concurrent_commands_with_default_max_sessions(
    sshd_topology: Topology,
) -> None:
    async with SSHPool(inventory(sshd_topology)) as pool:
        results = await asyncio.gather(
            *(pool.run("head", f"sleep 0.3; echo {i}") for i in range(20))
        )
    assert [r.stdout for r in results] == [f"{i}\n" for i in range(20)]
    assert all(r.exit_status == 0 for r in results)


async def test_changed_host_key_is_refused(sshd_topology: Topology, tmp_path: Path) -> None:
    head, worker = sshd_topology.head, sshd_topology.worker
    forged = tmp_path / "known_hosts"
    forged.write_text(f"{head.address} {worker.host_key_pub}\n")
    async with SSHPool(inventory(sshd_topology, known_hosts=str(forged))) as pool:
        with pytest.raises(HostKeyError) as caught:
            await pool.run("head", "true")
    message = str(caught.value)
    assert message.startswith(f"HOST KEY CHANGED for head ({head.address}:22)")
    assert f"ssh-keygen -R {head.address} -f {forged}" in message


async def test_trust_new_hosts_records_both_keys(sshd_topology: Topology, tmp_path: Path) -> None:
    fresh = tmp_path / "scout" / "known_hosts"
    recorded: list[tuple[str, str]] = []
    async with SSHPool(
        inventory(sshd_topology, known_hosts=str(fresh)),
        trust_new_hosts=True,
        on_new_host_key=lambda host, fp: recorded.append((host, fp)),
    ) as pool:
        result = await pool.run("worker", "hostname")
    assert result.stdout == "worker\n"
    assert [host for host, _ in recorded] == ["head", "worker"]
    assert all(fp.startswith("SHA256:") for _, fp in recorded)
    lines = fresh.read_text().splitlines()
    assert lines == [sshd_topology.head.known_hosts_line(), sshd_topology.worker.known_hosts_line()]
    assert shutil.which("ssh-keygen")  # the file is what OpenSSH itself reads:
    keygen = await asyncio.create_subprocess_exec(
        "ssh-keygen", "-F", sshd_topology.worker.address, "-f", str(fresh),
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await keygen.communicate()
    assert sshd_topology.worker.host_key_pub in out.decode()
