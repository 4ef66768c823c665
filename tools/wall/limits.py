"""The wall's matrix: per channel, the kernel mechanism that closes it, and where it cannot.

A channel is one way a command could change a host or reach past it. Each row is data: the
mechanism and the condition it needs, the Landlock ABI (Documentation/userspace-api/
landlock.rst: 1 (5.13) files, 3 (6.2) truncate, 4 (6.7) TCP ports, 5 (6.10) device ioctls,
6 (6.12) signal and abstract-socket scopes) and whether the helper runs as root (a PID
namespace and cgroup BPF need CAP_SYS_ADMIN; a root login or `sudo -n` gives it). `coverage()`
reads the matrix for one host; what it says is not stopped stays under the gate's allow-lists
(the classifier and the rules), never under the wall alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Mechanism:
    """One way to close a channel: how, and what it needs (Landlock ABI, root, cgroup2)."""

    how: str
    abi: int = 1
    root: bool = False
    cgroup2: bool = False

    def holds(self, abi: int, root: bool, cgroup2: bool) -> bool:
        return abi >= self.abi and (root or not self.root) and (cgroup2 or not self.cgroup2)


@dataclass(frozen=True)
class Coverage:
    kind: str
    stopped: bool
    how: str


SECCOMP = "seccomp"
# channel -> mechanisms, any of which closes it (PROBED_BY names the test that probes it).
MATRIX: dict[str, tuple[Mechanism, ...]] = {
    "file write": (
        Mechanism(
            "Landlock: every write right handled, none allowed but the "
            "scratch folder; truncate(2), chmod, chown, utime, xattrs by "
            f"{SECCOMP}"
        ),
    ),
    "device open": (
        Mechanism(
            "Landlock: reading handled, allowed beneath / but device file "
            "systems, where only a read-safe list opens (inode-based, so "
            "/proc/self/root/dev aliases and symlinks meet the same rule)"
        ),
    ),
    "daemon socket": (
        Mechanism(
            f"{SECCOMP}: no socket(AF_UNIX): docker's, containerd's and every pathname socket"
        ),
    ),
    # The one door: docker's reads reach its daemon through a proxy the helper starts outside
    # the wall; where the wall cannot name the proxy's port (no Landlock ABI 4, no root), the
    # helper builds no wall and docker asks, so the door never opens unfiltered.
    "docker api writes": (
        Mechanism(
            "read-only proxy (host_docker_proxy.py) on a loopback port only the call names, "
            "with a token of the call: only GET/HEAD of listed read endpoints reach the "
            "daemon; no body, no connection upgrade, no endless stream"
        ),
    ),
    "d-bus": (
        Mechanism(f"{SECCOMP}: no socket(AF_UNIX), so no bus (system, session or abstract)"),
    ),
    # The D-Bus door, as docker's: a call whose line uses a D-Bus client (systemctl, nmcli,
    # busctl, ...) reaches the system bus through a proxy the helper starts outside the wall;
    # where the wall cannot name its port, no proxy, and those clients ask.
    "d-bus writes": (
        Mechanism(
            "read-only D-Bus proxy (host_dbus_proxy.py) on a loopback port only the call "
            "names, serving only the helper's uid: only method calls on the services' read "
            "lists reach the bus (host_dbus_filter.py); every other call gets AccessDenied; "
            "no signal, no monitor, no file descriptor"
        ),
    ),
    "syslog": (Mechanism(f"{SECCOMP}: no socket(AF_UNIX), so no datagram to /dev/log"),),
    "abstract socket": (
        Mechanism(f"{SECCOMP}: no socket(AF_UNIX)"),
        Mechanism("Landlock scope", abi=6),
    ),
    "netlink write": (
        Mechanism(
            f"{SECCOMP}: netlink only for route, sock_diag, generic and "
            "rdma; their changes need CAP_NET_ADMIN, which is cut"
        ),
    ),
    "sysv ipc": (Mechanism(f"{SECCOMP}: msgget/semget/shmget and every SysV IPC call refused"),),
    "posix mqueue": (
        Mechanism(
            f"{SECCOMP}: mq_open and every mqueue call refused; /dev/mqueue files by Landlock"
        ),
    ),
    "keyring": (Mechanism(f"{SECCOMP}: add_key, request_key, keyctl refused"),),
    "lingering process": (
        Mechanism(
            "PID namespace: the command is its init; when it ends the kernel kills the rest",
            root=True,
        ),
        Mechanism("child subreaper: the helper kills what is left, round by round"),
    ),
    "signals": (
        Mechanism("Landlock scope: no signal outside the wall's domain", abi=6),
        Mechanism("PID namespace: a process outside it has no PID inside", root=True),
    ),
    "tcp port": (
        Mechanism("Landlock: connect only to the ports the call names", abi=4),
        Mechanism("cgroup BPF connect hooks: only the named ports", root=True, cgroup2=True),
    ),
    "tcp address": (
        Mechanism(
            "cgroup BPF connect hooks (as systemd's IPAddressAllow=): "
            "loopback and the inventory addresses the call names",
            root=True,
            cgroup2=True,
        ),
    ),
    "other sockets": (
        Mechanism(
            f"{SECCOMP}: no UDP, raw or packet socket; IPv4/IPv6 only as "
            "TCP and only when the call names ports"
        ),
    ),
    "root powers": (
        Mechanism(
            "capabilities cut to DAC_OVERRIDE and DAC_READ_SEARCH in every "
            "set and the bounding set; no_new_privs (sudo gives none back)"
        ),
    ),
    "device ioctls": (),  # see DEVICE_IOCTLS: their reads are ioctls on the same nodes
}

# channel -> the test that probes it on this machine's kernel inside the wall (and without it,
# so the test could fail), at Landlock ABI 1, 4, 5 and the kernel's own
_CHANNELS = "tests/system/test_wall_channels.py::"
_SSHD = "tests/system/test_wall_real_sshd.py::"
_PER_ABI = "tests/system/test_wall_per_abi.py::"
PROBED_BY = {
    "file write": _PER_ABI + "test_file_writes",
    "device open": _CHANNELS + "test_devices_beyond_the_read_safe_list_do_not_open",
    "daemon socket": _CHANNELS + "test_unix_sockets_are_closed",
    "docker api writes": "tests/system/test_wall_docker_proxy.py::"
    "test_every_change_fails_at_the_proxy_and_the_engine_is_unchanged",
    "d-bus": _CHANNELS + "test_d_bus_is_closed",
    "d-bus writes": "tests/system/test_wall_dbus_proxy.py::"
    "test_reads_pass_and_every_change_is_refused_at_the_proxy",
    "syslog": _CHANNELS + "test_unix_sockets_are_closed",
    "abstract socket": _PER_ABI + "test_abstract_sockets_are_stopped",
    "netlink write": _SSHD + "test_root_cannot_change_a_link_or_a_sysctl",
    "sysv ipc": _CHANNELS + "test_ipc_objects_and_keys_cannot_be_made",
    "posix mqueue": _CHANNELS + "test_ipc_objects_and_keys_cannot_be_made",
    "keyring": _CHANNELS + "test_ipc_objects_and_keys_cannot_be_made",
    "lingering process": _CHANNELS + "test_nothing_outlives_the_call",
    "signals": _CHANNELS + "test_no_signal_reaches_an_outside_process",
    "tcp port": _PER_ABI + "test_network",
    "tcp address": _CHANNELS + "test_a_named_port_is_reached_on_loopback_only",
    "other sockets": _SSHD + "test_no_connection_to_a_listener_on_another_address",
    "root powers": _PER_ABI + "test_root_powers",
}

# Programs whose changes are ioctls on device nodes the wall must leave open for their reads
# (root-only ioctls are stopped by the cut powers; the rest no kernel rule tells from a read).
DEVICE_IOCTLS = ("nvidia-smi", "nvidia-settings", "dcgmi", "ibv_devinfo", "ibstat", "perftest")
# Programs that only work through a daemon's socket, which the wall closes: docker's and the
# D-Bus clients' reach it through a read-only proxy; the others' reads are exact shapes run
# outside the wall or asked steps (tools/wall/daemons.py), or Scout's own probe runs them
# (tools/recon/probe.py).
DAEMON_CLIENTS = (
    "docker", "podman", "ctr", "nerdctl", "crictl", "kubectl", "systemctl", "journalctl",
    "loginctl", "hostnamectl", "timedatectl", "resolvectl", "networkctl", "busctl",
    "dbus-send", "gdbus", "nmcli", "logger", "snap",
)  # fmt: skip


def coverage(abi: int, *, root: bool = True, cgroup2: bool = True) -> list[Coverage]:
    """Per channel, whether a command inside the wall is stopped on a host with Landlock `abi`,
    the helper running as root or not, and a cgroup2 mount or not."""
    rows = []
    for kind, mechanisms in MATRIX.items():
        holding = [m.how for m in mechanisms if m.holds(abi, root, cgroup2)]
        if holding:
            rows.append(Coverage(kind, True, "; ".join(holding)))
        elif mechanisms:
            rows.append(Coverage(kind, False, "not stopped here: needs " + " or ".join(
                _needs(m) for m in mechanisms)))  # fmt: skip
        else:
            rows.append(Coverage(kind, False, "not stopped: " + ", ".join(DEVICE_IOCTLS)
                                 + " stay under the gate's allow-lists"))  # fmt: skip
    return rows


def described_coverage(said: str) -> list[Coverage]:
    """Coverage of a wall as its helper describes it to the command ($SCOUT_WALL): its ABI,
    whether it made a PID namespace (root), whether it built the address filter (cgroup2)."""
    abi = re.search(r"landlock-abi-(\d+)", said)
    root = "pid-namespace" in said
    return coverage(int(abi[1]) if abi else 1, root=root, cgroup2="address-filter" in said)


def proxy_reachable(said: str) -> bool:
    """Whether a wall its helper described ($SCOUT_WALL) can carry a read-only proxy (docker's,
    D-Bus's): its port needs a TCP filter, Landlock's (ABI 4+) or root's address filter. Where
    neither, the helper starts no proxy (the client meets the closed socket), so those
    clients' reads ask."""
    abi = re.search(r"landlock-abi-(\d+)", said)
    return (abi is not None and int(abi[1]) >= 4) or "root-read-only" in said


def _needs(mechanism: Mechanism) -> str:
    wants = [f"Landlock ABI {mechanism.abi}"] if mechanism.abi > 1 else []
    wants += ["root"] if mechanism.root else []
    wants += ["a cgroup2 mount"] if mechanism.cgroup2 else []
    return f"{mechanism.how.split(':')[0]} ({', '.join(wants)})"
