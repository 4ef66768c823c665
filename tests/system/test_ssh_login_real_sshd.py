"""Scout logs in wherever OpenSSH's `ssh` logs in with the same setup: a real ssh-agent, the
OpenSSH config's IdentityAgent (and `none`), a real passphrase-protected key, against real sshd
(the worker only through the head)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.login_keys import (
    PASSPHRASE,
    LoginKeys,
    login_keys,
    openssh_logs_in,
    ssh_add,
    start_agent,
)
from tests.support.sshd import run
from tests.support.sshd_topology import Topology
from tools.ssh import AuthError, Inventory, SSHPool

pytestmark = pytest.mark.system


@pytest.fixture
def keys(
    sshd_topology: Topology, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[LoginKeys]:
    with login_keys(sshd_topology, tmp_path) as made:
        monkeypatch.setenv("HOME", str(made.home))
        monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
        yield made


@pytest.fixture
def agent(tmp_path: Path, keys: LoginKeys) -> Iterator[Path]:
    """A running ssh-agent holding the agent-only key (whose file is gone afterwards)."""
    with start_agent(tmp_path) as socket:
        ssh_add(socket, keys.agent_only)
        keys.agent_only.unlink()
        yield socket


def inventory(topology: Topology, identity_file: Path | None = None, **extra: object) -> Inventory:
    data = topology.inventory_data()
    data["defaults"] = {"user": "root"}
    if identity_file is not None:
        data["defaults"]["identity_file"] = str(identity_file)  # type: ignore[index]
    return Inventory.from_dict({**data, **extra})


async def hostnames(pool: SSHPool) -> list[str]:
    results = await asyncio.gather(*(pool.run(h, "hostname") for h in ("head", "worker")))
    return [r.stdout.strip() for r in results]


async def test_the_agent_logs_in_as_it_does_for_ssh(
    sshd_topology: Topology, keys: LoginKeys, agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSH_AUTH_SOCK", str(agent))
    openssh = openssh_logs_in(sshd_topology, {**os.environ}, "-F", "/dev/null")
    assert (openssh.returncode, openssh.stdout) == (0, "head\n"), openssh.stderr
    async with SSHPool(inventory(sshd_topology)) as pool:
        assert await hostnames(pool) == ["head", "worker"]


async def test_without_the_agent_the_refusal_says_what_was_tried(
    sshd_topology: Topology, keys: LoginKeys, agent: Path
) -> None:
    async with SSHPool(inventory(sshd_topology), connect_attempts=1) as pool:
        with pytest.raises(AuthError) as refused:
            await pool.run("head", "hostname")
    message = str(refused.value)
    assert message.startswith(
        f"head ({sshd_topology.head.address}:22) refused login as 'root' with the keys in "
        "~/.ssh (no ssh-agent: SSH_AUTH_SOCK is not set): "
    )
    assert "\n" not in message


async def test_identity_agent_in_the_ssh_config_is_used_and_none_turns_it_off(
    sshd_topology: Topology, keys: LoginKeys, agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = keys.home / ".ssh" / "config"
    config.parent.mkdir()
    addresses = f"{sshd_topology.head.address} {sshd_topology.worker.address}"
    config.write_text(f"Host {addresses}\n    IdentityAgent {agent}\n")
    openssh = openssh_logs_in(sshd_topology, {**os.environ}, "-F", str(config))
    assert openssh.returncode == 0, openssh.stderr
    async with SSHPool(inventory(sshd_topology)) as pool:  # SSH_AUTH_SOCK is not set
        assert await hostnames(pool) == ["head", "worker"]

    config.write_text(f"Host {addresses}\n    IdentityAgent none\n")
    monkeypatch.setenv("SSH_AUTH_SOCK", str(agent))
    openssh = openssh_logs_in(sshd_topology, {**os.environ}, "-F", str(config))
    assert openssh.returncode == 255  # ssh does not use the agent either
    async with SSHPool(inventory(sshd_topology), connect_attempts=1) as pool:
        with pytest.raises(AuthError) as refused:
            await pool.run("head", "hostname")
    assert "(no ssh-agent: IdentityAgent none)" in str(refused.value)


async def test_a_protected_key_without_a_terminal_says_to_use_the_agent(
    sshd_topology: Topology, keys: LoginKeys
) -> None:
    async with SSHPool(inventory(sshd_topology, keys.locked), connect_attempts=1) as pool:
        with pytest.raises(AuthError) as refused:
            await pool.run("worker", "hostname")
    message = str(refused.value)
    assert "\n" not in message
    assert f"key {keys.locked} could not be used (it needs its passphrase and there is no " in (
        message
    )
    assert f"Load it into ssh-agent (`ssh-add {keys.locked}`)" in message


async def test_a_protected_key_in_the_agent_asks_nothing(
    sshd_topology: Topology, keys: LoginKeys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    questions: list[str] = []

    async def prompt(question: str) -> str | None:
        questions.append(question)
        return None

    with start_agent(tmp_path) as socket:
        ssh_add(socket, keys.locked, PASSPHRASE)
        monkeypatch.setenv("SSH_AUTH_SOCK", str(socket))
        pool = SSHPool(inventory(sshd_topology, keys.locked), passphrase_prompt=prompt)
        async with pool:
            assert await hostnames(pool) == ["head", "worker"]
    assert questions == []


async def test_the_passphrase_is_asked_once_for_every_host(
    sshd_topology: Topology, keys: LoginKeys
) -> None:
    questions: list[str] = []
    answers = iter(["not it", PASSPHRASE])

    async def prompt(question: str) -> str | None:
        questions.append(question)
        return next(answers)

    pool = SSHPool(inventory(sshd_topology, keys.locked), passphrase_prompt=prompt)
    async with pool:
        assert await hostnames(pool) == ["head", "worker"]
    assert questions == [
        f"Enter passphrase for key '{keys.locked}': ",
        f"Bad passphrase, try again for '{keys.locked}': ",
    ]


async def test_a_protected_key_without_its_public_half_says_how_to_use_it(
    sshd_topology: Topology, keys: LoginKeys, tmp_path: Path
) -> None:
    """An old PEM key whose .pub is gone: nothing tells which host takes it before decrypting."""
    legacy = tmp_path / "legacy_rsa"
    pem = ["-t", "rsa", "-b", "2048", "-m", "PEM"]
    run(["ssh-keygen", "-q", *pem, "-N", PASSPHRASE, "-f", str(legacy)])
    legacy.with_suffix(".pub").unlink()
    questions: list[str] = []

    async def prompt(question: str) -> str | None:
        questions.append(question)
        return PASSPHRASE

    pool = SSHPool(inventory(sshd_topology, legacy), connect_attempts=1, passphrase_prompt=prompt)
    async with pool:
        with pytest.raises(AuthError) as refused:
            await pool.run("head", "hostname")
    message = str(refused.value)
    assert message.startswith(f"cannot use identity file {legacy} for head: ")
    assert f"`ssh-add {legacy}`" in message and f"`ssh-keygen -y -f {legacy} >" in message
    assert "\n" not in message and questions == []


async def test_every_identity_file_of_the_ssh_config_is_offered(
    sshd_topology: Topology, keys: LoginKeys
) -> None:
    """A missing key skipped, a key the hosts refuse, then the one they take (its passphrase
    asked once), as ssh goes down the same IdentityFile lines."""
    refused = keys.home / ".ssh" / "id_refused"
    refused.parent.mkdir()
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(refused)])
    addresses = f"{sshd_topology.head.address} {sshd_topology.worker.address}"
    (keys.home / ".ssh" / "config").write_text(
        f"Host {addresses}\n    IdentityFile ~/.ssh/id_missing\n"
        f"    IdentityFile ~/.ssh/id_refused\n    IdentityFile {keys.locked}\n"
    )
    questions: list[str] = []

    async def prompt(question: str) -> str | None:
        questions.append(question)
        return PASSPHRASE

    async with SSHPool(inventory(sshd_topology), passphrase_prompt=prompt) as pool:
        assert await hostnames(pool) == ["head", "worker"]
    assert questions == [f"Enter passphrase for key '{keys.locked}': "]


async def test_a_crowded_agent_offers_the_identity_file_first(
    sshd_topology: Topology, keys: LoginKeys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six other keys in the agent would use up sshd's MaxAuthTries (6) before the right one;
    ssh offers the agent's copy of the IdentityFile first, and so does Scout."""
    with start_agent(tmp_path) as socket:
        crowd(socket, tmp_path)
        ssh_add(socket, keys.agent_only)
        monkeypatch.setenv("SSH_AUTH_SOCK", str(socket))
        config = ssh_config(keys, sshd_topology, f"IdentityFile {keys.agent_only}")
        keys.agent_only.unlink()  # only the agent can sign; its .pub names it
        openssh = openssh_logs_in(sshd_topology, {**os.environ}, "-F", str(config))
        assert openssh.returncode == 0, openssh.stderr
        async with SSHPool(inventory(sshd_topology)) as pool:
            assert await hostnames(pool) == ["head", "worker"]


async def test_identities_only_keeps_the_crowd_out(
    sshd_topology: Topology, keys: LoginKeys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key is a file the agent lacks: its six keys go first and sshd gives up, for ssh and
    for Scout alike, until IdentitiesOnly leaves them out."""
    with start_agent(tmp_path) as socket:
        crowd(socket, tmp_path)
        monkeypatch.setenv("SSH_AUTH_SOCK", str(socket))
        config = ssh_config(keys, sshd_topology, f"IdentityFile {keys.agent_only}")
        openssh = openssh_logs_in(sshd_topology, {**os.environ}, "-F", str(config))
        assert "Too many authentication failures" in openssh.stderr
        async with SSHPool(inventory(sshd_topology), connect_attempts=1) as pool:
            with pytest.raises(AuthError) as refused:
                await pool.run("head", "hostname")
        assert "Too many authentication failures" in str(refused.value)

        config = ssh_config(
            keys, sshd_topology, f"IdentityFile {keys.agent_only}", "IdentitiesOnly yes"
        )
        openssh = openssh_logs_in(sshd_topology, {**os.environ}, "-F", str(config))
        assert openssh.returncode == 0, openssh.stderr
        async with SSHPool(inventory(sshd_topology)) as pool:
            assert await hostnames(pool) == ["head", "worker"]


def crowd(socket: Path, folder: Path) -> None:
    """Six keys no host accepts, in the agent before any other."""
    for number in range(6):
        other = folder / f"other_{number}"
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)])
        ssh_add(socket, other)


def ssh_config(keys: LoginKeys, topology: Topology, *lines: str) -> Path:
    """~/.ssh/config with `lines` for both hosts' addresses."""
    config = keys.home / ".ssh" / "config"
    config.parent.mkdir(exist_ok=True)
    body = "".join(f"    {line}\n" for line in lines)
    config.write_text(f"Host {topology.head.address} {topology.worker.address}\n{body}")
    return config
