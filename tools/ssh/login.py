"""How Scout logs in to a host: as the operator's own `ssh` would, through asyncssh's own support.

The agent is the host's `IdentityAgent` from the OpenSSH config, else $SSH_AUTH_SOCK (`none`
turns it off). Without identity files the order is asyncssh's own: the agent's keys, then
~/.ssh/id_*. With identity files (the inventory's, else the config's IdentityFile lines) it is
OpenSSH's (sshconnect2.c, pubkey_prepare), which asyncssh does not follow by itself: the agent's
copies of those keys first, then the agent's other keys (none with `IdentitiesOnly`), then the
files the agent does not hold, so a crowded agent does not use up sshd's MaxAuthTries before the
right key. A protected file is decrypted only once a host accepts it (tools/ssh/passphrase.py).
When a host refuses, `refusal` says what was offered and what to do.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import asyncssh

from tools.ssh.inventory import HostSpec
from tools.ssh.passphrase import KeyPassphrases, public_half


@contextlib.asynccontextmanager
async def login_options(
    spec: HostSpec, passphrases: KeyPassphrases
) -> AsyncIterator[dict[str, Any]]:
    """asyncssh.connect's authentication arguments for `spec`, valid while the context is open
    (the agent's keys sign through its connection). No OpenSSH config is read again here."""
    agent_path = _agent_path(spec)
    common: dict[str, Any] = {"passphrase": passphrases, "config": None}
    if not spec.identity_files:
        yield {**common, "client_keys": (), "agent_path": agent_path}
        return
    agent = None
    if agent_path is not None:
        agent = asyncssh.SSHAgentClient(agent_path or os.environ["SSH_AUTH_SOCK"])
    try:
        held = await _agent_keys(agent)
        keys = _in_ssh_order(spec.identity_files, held, spec.identities_only)
        yield {**common, "client_keys": keys, "agent_path": None}
    finally:
        if agent is not None:
            agent.close()
            await agent.wait_closed()


async def _agent_keys(agent: asyncssh.SSHAgentClient | None) -> Sequence[asyncssh.SSHKeyPair]:
    if agent is None:
        return []
    try:
        return await agent.get_keys()
    except (OSError, ValueError):  # no agent answers there: ssh goes on without it, so do we
        return []


def _in_ssh_order(
    files: list[Path], held: Sequence[asyncssh.SSHKeyPair], identities_only: bool
) -> list[asyncssh.SSHKeyPair | str]:
    halves = {path: public_half(path) for path in files}
    wanted = {half.public_data for half in halves.values() if half is not None}
    in_agent = [key for key in held if key.public_data in wanted]
    others = [] if identities_only else [key for key in held if key.public_data not in wanted]
    have = {key.public_data for key in in_agent}
    rest = [
        str(path) for path, half in halves.items() if half is None or half.public_data not in have
    ]
    return [*in_agent, *others, *rest]


def refusal(spec: HostSpec, reason: str, passphrases: KeyPassphrases) -> str:
    """What a refused login offered, and what to do; a key that could not be used comes first."""
    unusable = {
        name: why
        for name, why in passphrases.unusable.items()
        if not spec.identity_files or Path(name) in spec.identity_files
    }
    if unusable:
        name, why = next(iter(unusable.items()))
        return (
            f"{spec.name} ({spec.endpoint}) refused login as {spec.user!r}: key {name} could "
            f"not be used ({why}). Load it into ssh-agent (`ssh-add {name}`) and run Scout "
            "where SSH_AUTH_SOCK points to that agent."
        )
    keys = ", ".join(map(str, spec.identity_files)) or "the keys in ~/.ssh"
    agent = _agent_path(spec)
    if agent is None:
        why_not = "IdentityAgent none" if spec.identity_agent else "SSH_AUTH_SOCK is not set"
        offered = f"{keys} (no ssh-agent: {why_not})"
    else:
        offered = f"{keys} and the ssh-agent at {agent or os.environ['SSH_AUTH_SOCK']}"
    return (
        f"{spec.name} ({spec.endpoint}) refused login as {spec.user!r} with {offered}: "
        f"{reason}. Check the user name and that the public key is in "
        f"~{spec.user}/.ssh/authorized_keys on the host."
    )


def _agent_path(spec: HostSpec) -> str | tuple[()] | None:
    """asyncssh's agent_path: () for $SSH_AUTH_SOCK (asyncssh's default), None for no agent."""
    agent = spec.identity_agent
    if agent is None or agent == "SSH_AUTH_SOCK":
        return () if os.environ.get("SSH_AUTH_SOCK") else None
    return None if agent.lower() == "none" else os.path.expanduser(agent)
