"""Typed SSH failures whose `str()` is the message a user reads: what happened and what to do."""

from __future__ import annotations

from typing import Protocol


class Reached(Protocol):
    """How a host is reached, as an inventory's HostSpec says it."""

    name: str
    address: str
    port: int
    jump: str | None

    @property
    def endpoint(self) -> str: ...


class SSHError(Exception):
    """Base of every SSH failure Scout reports; `str(err)` is the user-facing message."""


class InventoryError(SSHError):
    """The inventory file or data cannot be used as written."""


class UnknownHostError(SSHError):
    """A host name that the inventory does not define."""

    def __init__(self, name: str, known: list[str]) -> None:
        listed = ", ".join(known) if known else "(none)"
        super().__init__(
            f"unknown host {name!r}; the inventory defines: {listed}. "
            "Use one of these names or add the host to the inventory file."
        )
        self.name = name
        self.known = known


class HostUnreachableError(SSHError):
    """No SSH connection could be made (refused, no route, timeout, dropped)."""


class HostKeyError(SSHError):
    """The host's key is not trusted: unknown, or different from the one recorded."""


class AuthError(SSHError):
    """The host refused to log in with the configured user and key."""


def unreachable_message(spec: Reached, reason: str) -> str:
    """What a HostUnreachableError says about `spec`: the reason, and what to check."""
    through = f" through {spec.jump}" if spec.jump else ""
    return (
        f"cannot reach {spec.name} ({spec.endpoint}){through}: {reason}; check that the host is "
        f"up, that {spec.address} and port {spec.port} are right"
        + (f" and reachable from {spec.jump}" if spec.jump else "")
        + ", and that sshd is listening there."
    )
