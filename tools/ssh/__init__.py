"""SSH for Scout: the inventory, host key checks, pooled connections and remote commands.

The pool and remote commands (which import asyncssh) load on first use of their names, so
reading an inventory or catching an SSH error does not import asyncssh.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tools.ssh.native_libraries import lookup_on_asyncssh_import

lookup_on_asyncssh_import()  # before any module here imports asyncssh

from tools.ssh.errors import (
    AuthError,
    HostKeyError,
    HostUnreachableError,
    InventoryError,
    SSHError,
    UnknownHostError,
)
from tools.ssh.inventory import HostSpec, Inventory

if TYPE_CHECKING:
    from tools.ssh.pool import SSHPool
    from tools.ssh.remote_command import CommandResult

_LOADED_ON_USE = {"SSHPool": "tools.ssh.pool", "CommandResult": "tools.ssh.remote_command"}

__all__ = [
    "AuthError",
    "CommandResult",
    "HostKeyError",
    "HostSpec",
    "HostUnreachableError",
    "Inventory",
    "InventoryError",
    "SSHError",
    "SSHPool",
    "UnknownHostError",
]


def __getattr__(name: str) -> Any:
    if name in _LOADED_ON_USE:
        import importlib

        return getattr(importlib.import_module(_LOADED_ON_USE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
