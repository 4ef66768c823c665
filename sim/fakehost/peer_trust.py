"""Whether this host's ssh client gets into a peer: its host key known, our key authorized.

OpenSSH's client, non-interactive (BatchMode, or no terminal to ask on, as in a job), stops at a
host key it does not know with `Host key verification failed.` and at a server that accepts none
of its keys with `USER@HOST: Permission denied (publickey).`, exit 255 either way (ssh(1);
docs/sources.md §6 failure mode 22). The scenario's `peer_ssh` says what this host's account was
given (sim/scenario.py PeerSsh); by default NVIDIA's passwordless setup ran and both hold.
"""

from __future__ import annotations

from typing import Any


def refusal(state: dict[str, Any], peer: dict[str, Any], destination: str) -> str | None:
    """What ssh prints when it cannot log in to `peer` as `destination` says, or None."""
    trust = state.get("peer_ssh") or {}
    user, _, address = destination.rpartition("@")
    known = trust.get("known_hosts")
    if known is not None and address not in known:
        return "Host key verification failed.\n"
    authorized = trust.get("authorized_on")
    if authorized is not None and peer["hostname"] not in authorized:
        return f"{user or state['user']}@{address}: Permission denied (publickey).\n"
    return None
