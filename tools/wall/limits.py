"""What the wall stops, per class, on a given kernel, and what it cannot stop on any.

Landlock's rights grow with its ABI (Documentation/userspace-api/landlock.rst): 1 (5.13) the file
system, 3 (6.2) truncate, 4 (6.7) TCP ports, 5 (6.10) device ioctls, 6 (6.12) signal and abstract
socket scopes. The seccomp filter and dropped capabilities hold on every kernel Scout walls.
What no ABI covers is listed per program: those programs' reads stay under the gate's
allow-lists (the classifier and the rules), never under the wall alone.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Coverage:
    kind: str
    stopped: bool
    how: str


def coverage(abi: int) -> list[Coverage]:
    """Per class, whether a command inside the wall is stopped on a kernel of Landlock `abi`."""
    return [
        Coverage("file write", abi >= 1, "Landlock: every write right handled, none allowed "
                 "but the scratch folder; truncate(2), chmod, chown, utime and xattrs by seccomp"),
        Coverage("network", abi >= 1, "seccomp: no IPv4/IPv6/packet socket (only Unix and "
                 "netlink); a read that names a loopback or inventory URL gets TCP streams, "
                 + ("which Landlock lets connect only to the ports it names (to any address: "
                    "Landlock rules are per port)" if abi >= 4 else "to any address and port "
                    "(no Landlock network rules before ABI 4)")),
        Coverage("root powers", abi >= 1, "capabilities cut to DAC_OVERRIDE and DAC_READ_SEARCH "
                 "in every set and the bounding set, no_new_privs (sudo cannot give them back)"),
        Coverage("signals", abi >= 6, "Landlock scope: no signal to a process outside the wall"
                 if abi >= 6 else "not scoped before Landlock ABI 6: a read may signal its "
                 "user's other processes (root's powers are gone, so only its own user's)"),
        Coverage("daemon sockets", False, "not stopped: a pathname Unix socket (docker, D-Bus, "
                 "containerd, nvidia-persistenced) is reachable; " + ", ".join(DAEMON_SOCKETS)
                 + " stay under the gate's allow-lists"),
        Coverage("device ioctls", False, "not stopped on the GPU and RDMA nodes their drivers "
                 "open read-write to be read at all; " + ", ".join(DEVICE_IOCTLS) + " stay "
                 "under the gate's allow-lists (root-only ioctls are stopped by the cut powers)"),
    ]  # fmt: skip


# Programs whose changes go through a daemon's control socket the wall cannot close.
DAEMON_SOCKETS = ("docker", "systemctl", "journalctl", "containerd/ctr", "nvidia-persistenced")
# Programs whose changes are ioctls on device nodes the wall must leave open for their reads.
DEVICE_IOCTLS = ("nvidia-smi", "nvidia-settings", "dcgmi", "ibv_devinfo", "ibstat", "perftest")
