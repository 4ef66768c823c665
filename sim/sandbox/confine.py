"""Confine this process to the simulator's folder with Landlock, then exec a command.

Usage: python -IS confine.py HOST_DIR WRITE_ROOT EXEC_ALLOW_FILE -- BASH [ARGS...]

The sandbox's scripts (`sh -c`, `bash -c`) run in an unrestricted bash, so that output
redirections work as on a real host; this is the wall that replaces restricted bash there:

- files and folders are created, written, truncated, renamed and removed only beneath
  WRITE_ROOT (and /dev/null may be written); reading stays open, as it is for the restricted
  shell. The launcher passes the folder holding every simulated host: the fake tools a script
  runs are confined with it, and some act on peers as a network would (a copy fills the
  peer's HF cache, a multi-node engine takes the peer's memory). Once fake tools run outside
  the sandbox (a per-host tool server), WRITE_ROOT can be the host's own folder;
- only the programs listed in EXEC_ALLOW_FILE and the host's own bin/sandbox folders execute;
- no TCP port can be bound, and abstract Unix sockets outside the sandbox cannot be reached;
- a root simulator's sandbox keeps no capabilities.

Landlock is inherited by every child and cannot be lifted. Where the kernel has no Landlock the
command runs as restricted bash instead (fail closed: redirections are refused, with a note).
Standalone on purpose (no imports from sim, nothing slow to import): it runs before every
sandbox script.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on every arch
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 24, 47, 4
CAPABILITY_VERSION_3 = 0x20080522

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP = 1 << 0
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0

WRITES_V1 = (
    WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK
    | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM
)  # fmt: skip
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV


class ConfineError(Exception):
    """Landlock could not be set up; nothing was confined."""


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _syscall(number: int, *args: object) -> int:
    result = _libc.syscall(number, *args)
    if result < 0:
        errno = ctypes.get_errno()
        raise ConfineError(f"syscall {number} failed: {os.strerror(errno)}")
    return int(result)


def abi_version() -> int:
    try:
        return _syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), CREATE_RULESET_VERSION)
    except ConfineError:
        return 0


def _handled_fs(abi: int) -> int:
    rights = EXECUTE | WRITES_V1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def _create_ruleset(abi: int) -> tuple[int, int]:
    fs = _handled_fs(abi)
    if abi >= 6:
        attr = struct.pack("=QQQ", fs, NET_BIND_TCP, SCOPE_ABSTRACT_UNIX_SOCKET)
    elif abi >= 4:
        attr = struct.pack("=QQ", fs, NET_BIND_TCP)
    else:
        attr = struct.pack("=Q", fs)
    buf = ctypes.create_string_buffer(attr, len(attr))
    return _syscall(SYS_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), 0), fs


def _allow(ruleset: int, path: str, rights: int) -> None:
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        attr = struct.pack("=Qi", rights, fd)
        buf = ctypes.create_string_buffer(attr, len(attr))
        _syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, buf, 0)
    finally:
        os.close(fd)


def _drop_capabilities() -> None:
    """A root simulator's sandbox runs without any capability (root's files stay read-only)."""
    if os.geteuid() != 0:
        return
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = struct.pack("=Ii", CAPABILITY_VERSION_3, 0)
    data = bytes(24)  # two (effective, permitted, inheritable) words, all empty
    if _libc.capset(ctypes.c_char_p(header), ctypes.c_char_p(data)) != 0:
        raise ConfineError(f"capset failed: {os.strerror(ctypes.get_errno())}")


def confine(host_dir: str, write_root: str, executables: list[str]) -> int:
    """Apply the rules above to this process; return the Landlock ABI used."""
    abi = abi_version()
    if abi < 1:
        raise ConfineError("this kernel has no Landlock (Linux 5.13+ with landlock in lsm=)")
    ruleset, handled = _create_ruleset(abi)
    try:
        _allow(ruleset, write_root, handled & ~EXECUTE)
        for sub in ("bin", "bin-script", "sandbox"):
            if os.path.isdir(os.path.join(host_dir, sub)):
                _allow(ruleset, os.path.join(host_dir, sub), EXECUTE)
        _allow(ruleset, os.devnull, WRITE_FILE | TRUNCATE)
        for path in executables:
            if os.path.exists(path):
                _allow(ruleset, path, EXECUTE)
        if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise ConfineError(f"no_new_privs failed: {os.strerror(ctypes.get_errno())}")
        _drop_capabilities()
        _syscall(SYS_RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)
    return abi


def restricted_fallback(host_dir: str, command: list[str], reason: str) -> list[str]:
    """Without Landlock a script runs as an SSH command does: restricted bash, PATH = bin only."""
    if ">" in os.environ.get("SIM_CMD", ""):
        sys.stderr.write(
            f"sim sandbox: output redirection needs Landlock, which is unavailable ({reason}); "
            "this script runs in restricted bash\n"
        )
    os.environ["PATH"] = os.path.join(host_dir, "bin")
    at = command.index("-c") if "-c" in command else 1
    return [*command[:at], "-r", *command[at:]]


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[3] != "--":
        sys.stderr.write(
            "usage: confine.py HOST_DIR WRITE_ROOT EXEC_ALLOW_FILE -- BASH [ARGS...]\n"
        )
        return 2
    host_dir, write_root, allow_file, command = argv[0], argv[1], argv[2], argv[4:]
    try:
        with open(allow_file) as f:
            executables = f.read().split("\n")
        confine(host_dir, write_root, [p for p in executables if p])
    except (ConfineError, OSError) as exc:
        command = restricted_fallback(host_dir, command, str(exc))
    os.execv(command[0], command)
    return 127  # not reached: execv replaces this process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
