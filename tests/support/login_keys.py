"""The operator's own SSH setup for the real-sshd tests: a running ssh-agent and keys of their own.

`LoginKeys` makes a key that only the agent holds and a passphrase-protected key, both allowed on
the topology's hosts, and a HOME with nothing in ~/.ssh; `start_agent` runs a real `ssh-agent`
on a private socket (stopped by its pid).
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.sshd import START_WAIT_S, run
from tests.support.sshd_topology import Topology

PASSPHRASE = "correct horse 7 battery"


@dataclass
class LoginKeys:
    home: Path  # an empty HOME: no ~/.ssh keys or config unless a test writes them
    agent_only: Path  # its private half was deleted after ssh-add: only the agent can sign
    locked: Path  # protected by PASSPHRASE


@contextlib.contextmanager
def start_agent(folder: Path) -> Iterator[Path]:
    """A real ssh-agent in the foreground on `folder`/agent.sock; yields the socket once the
    agent listens on it. The socket file appears at bind(), a moment before listen(); the
    `SSH_AUTH_SOCK=…` line the agent prints comes after both (ssh-agent.c), so that is the
    readiness signal."""
    socket = folder / "agent.sock"
    agent = subprocess.Popen(
        ["ssh-agent", "-D", "-a", str(socket)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    said = agent.stdout
    assert said is not None
    try:
        ready, _, _ = select.select([said], [], [], START_WAIT_S)
        if not ready or not said.readline().startswith("SSH_AUTH_SOCK="):
            raise RuntimeError("ssh-agent did not say it listens")
        yield socket
    finally:
        agent.terminate()
        agent.wait(timeout=START_WAIT_S)
        said.close()


def ssh_add(socket: Path, key: Path, passphrase: str = "") -> None:
    """`ssh-add KEY` as a person would, the passphrase typed through SSH_ASKPASS."""
    askpass = key.parent / "askpass.sh"
    askpass.write_text(f"#!/bin/sh\necho '{passphrase}'\n")
    askpass.chmod(0o700)
    env = {
        **os.environ,
        "SSH_AUTH_SOCK": str(socket),
        "SSH_ASKPASS": str(askpass),
        "SSH_ASKPASS_REQUIRE": "force",
        "DISPLAY": ":0",
    }
    subprocess.run(["ssh-add", str(key)], env=env, check=True, capture_output=True, timeout=30)
    askpass.unlink()


@contextlib.contextmanager
def login_keys(topology: Topology, folder: Path) -> Iterator[LoginKeys]:
    """Both keys allowed on the head and the worker for the test's duration."""
    keys = folder / "keys"
    keys.mkdir()
    home = folder / "home"
    home.mkdir()
    agent_only, locked = keys / "agent_only", keys / "locked"
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(agent_only)])
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", PASSPHRASE, "-f", str(locked)])
    added = [
        agent_only.with_suffix(".pub").read_text(),
        locked.with_suffix(".pub").read_text(),
    ]
    files = [host.workdir / "authorized_keys" for host in (topology.head, topology.worker)]
    before = [path.read_text() for path in files]
    for path, text in zip(files, before, strict=True):
        path.write_text(text + "".join(added))
    try:
        yield LoginKeys(home, agent_only, locked)
    finally:
        for path, text in zip(files, before, strict=True):
            path.write_text(text)


def openssh_logs_in(
    topology: Topology, env: dict[str, str], *options: str
) -> subprocess.CompletedProcess[str]:
    """OpenSSH's own client to the head with the same setup, never asking anything."""
    return subprocess.run(
        [
            "ssh",
            "-o",
            "BatchMode=yes",
            "-o",
            f"UserKnownHostsFile={topology.known_hosts}",
            *options,
            f"root@{topology.head.address}",
            "hostname",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
