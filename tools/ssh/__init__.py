"""SSH for Scout: the inventory, host key checks, pooled connections and remote commands."""

from tools.ssh.native_libraries import import_asyncssh

import_asyncssh()  # before the modules below: their `import asyncssh` then finds it loaded

from tools.ssh.errors import (
    AuthError,
    HostKeyError,
    HostUnreachableError,
    InventoryError,
    SSHError,
    UnknownHostError,
)
from tools.ssh.inventory import HostSpec, Inventory
from tools.ssh.pool import SSHPool
from tools.ssh.remote_command import CommandResult

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
