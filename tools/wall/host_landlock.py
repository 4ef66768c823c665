"""The wall's Landlock part, on the host: the file system read-only, devices closed but a few.

Landlock's rights grow with its ABI (Documentation/userspace-api/landlock.rst): 1 (5.13) the
file system, 2 refer, 3 (6.2) truncate, 4 (6.7) TCP ports, 5 (6.10) device ioctls, 6 (6.12)
signal and abstract-socket scopes. Every right that changes the file system is handled and
allowed only beneath the call's scratch folder, on sinks and on the GPU and RDMA nodes whose
drivers need a writable open to be read (nvidia-smi opens /dev/nvidiactl read-write).

Reading a file is handled too, and allowed beneath everything but device file systems
(devtmpfs, wherever mounted), where only READ_SAFE_DEVICES may be opened: opening some devices
acts (a watchdog arms on open, /dev/cpu_dma_latency holds a latency request while open).
Landlock judges the file reached, walking up its real path, so `/proc/self/root/dev/watchdog`,
`/dev/fd/N` and symlinks meet the same rule as `/dev/watchdog`.

Standard library only, Python 3.8+: it runs on the host (tools/wall/command.py ships it).
"""

from __future__ import annotations

import ctypes
import os
import struct

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on every arch
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR, REMOVE_DIR, REMOVE_FILE = 1, 2, 4, 8, 16, 32
MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK = 64, 128, 256, 512, 1024, 2048
MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV = 4096, 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # what a file's rule carries

# Sinks every program may write; devices a read may open (reading them changes nothing: the
# kernel log is read per descriptor, the tty is the caller's own); drivers that need a writable
# open to be read (their ioctls: tools/wall/limits.py).
SINKS = ("/dev/null", "/dev/zero", "/dev/full")
READ_SAFE_DEVICES = (*SINKS, "/dev/random", "/dev/urandom", "/dev/tty", "/dev/kmsg", "/dev/shm")
DEVICE_PREFIXES = ("/dev/nvidia", "/dev/infiniband")
DEVICE_FILE_SYSTEMS = ("devtmpfs",)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class Unwalled(Exception):
    """A part of the wall cannot be built here; the command must not run."""


def syscall(number: int, *args: object) -> int:
    result = _libc.syscall(number, *args)
    if result < 0:
        raise Unwalled(f"syscall {number}: {os.strerror(ctypes.get_errno())}")
    return int(result)


def landlock_abi() -> int:
    """The kernel's Landlock ABI; 0 when the kernel lacks it or boots without it (lsm=)."""
    result = _libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), 1)
    return int(result) if result > 0 else 0


def fs_writes(abi: int) -> int:
    rights = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG
    rights |= MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def _add_path(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # absent here: nothing to allow
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        attr = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
        syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, attr, 0)
    finally:
        os.close(fd)


def device_mounts() -> list[str]:
    """/dev (devtmpfs on a host, a tmpfs of device nodes in a container) and wherever else a
    device file system is mounted."""
    found = ["/dev"]
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields, _, rest = line.partition(" - ")
            if rest.split(" ", 1)[0] in DEVICE_FILE_SYSTEMS:
                found.append(fields.split(" ")[4].replace("\\040", " "))
    return sorted(set(found))


def readable_roots(closed: list[str]) -> list[str]:
    """Folders and files beneath which reading is allowed: all of / but the `closed` mount
    points, by descending only into the folders that hold one."""
    roots: list[str] = []
    pending = ["/"]
    while pending:
        folder = pending.pop()
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            if path in closed:
                continue
            if any(mount.startswith(path + "/") for mount in closed):
                pending.append(path)
            else:
                roots.append(path)
    return roots


def device_nodes() -> list[str]:
    return [
        "/dev/" + name
        for name in sorted(os.listdir("/dev"))
        if any(("/dev/" + name).startswith(prefix) for prefix in DEVICE_PREFIXES)
    ]


def landlock(abi: int, scratch: str | None, ports: list[int]) -> None:
    """Read-only but for the scratch folder, sinks and GPU nodes; devices closed but a few;
    TCP only to `ports` (ABI 4+); signals and abstract sockets scoped (ABI 6+)."""
    writes = fs_writes(abi)
    handled = writes | READ_FILE
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET if abi >= 6 else 0
    if abi >= 6:
        attr = struct.pack("=QQQ", handled, net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", handled, net)
    else:
        attr = struct.pack("=Q", handled)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = syscall(SYS_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), 0)
    try:
        for root in readable_roots(device_mounts()):
            _add_path(ruleset, root, READ_FILE)
        for device in READ_SAFE_DEVICES:
            _add_path(ruleset, device, READ_FILE)
        if scratch:
            _add_path(ruleset, scratch, handled)
        for sink in SINKS:
            _add_path(ruleset, sink, WRITE_FILE | (TRUNCATE & writes))
        for node in device_nodes():
            _add_path(ruleset, node, READ_FILE | WRITE_FILE | (IOCTL_DEV & writes))
        for port in ports if net else []:
            rule = ctypes.create_string_buffer(struct.pack("=QQ", NET_CONNECT_TCP, port), 16)
            syscall(SYS_ADD_RULE, ruleset, RULE_NET_PORT, rule, 0)
        syscall(SYS_RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)
