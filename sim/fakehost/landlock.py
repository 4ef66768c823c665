"""Landlock through ctypes: a ruleset of what a process and its children may write and run.

Landlock (Linux 5.13+, Documentation/userspace-api/landlock.rst) lets an unprivileged process
restrict itself for good; every child inherits the restriction and may only add to it. What a
ruleset "handles" is denied unless a rule allows it beneath a folder (or for one file):

- ABI 1: executing, writing, creating and removing files; ABI 2: linking or renaming across
  folders (REFER); ABI 3: truncating; ABI 5: ioctl on devices;
- ABI 4: binding and connecting TCP ports (a ruleset that handles them with no port rule allows
  none);
- ABI 6: scopes: no signal to, and no abstract Unix socket of, a process outside the domain.

A Landlock domain also may not ptrace (nor read /proc/PID/environ of) a process outside itself
or its nested domains, and may not mount anything.
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on every arch
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

WRITES_V1 = (
    WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK
    | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM
)  # fmt: skip
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # what a file rule may hold


class LandlockError(Exception):
    """Landlock is missing, too old for what was asked, or refused a rule."""


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _syscall(number: int, *args: object) -> int:
    result = _libc.syscall(number, *args)
    if result < 0:
        raise LandlockError(f"landlock syscall {number}: {os.strerror(ctypes.get_errno())}")
    return int(result)


def abi_version() -> int:
    """The kernel's Landlock ABI, 0 when Landlock is absent or disabled (lsm=)."""
    try:
        return _syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), CREATE_RULESET_VERSION)
    except LandlockError:
        return 0


def writes(abi: int) -> int:
    """Every right that changes the file system, as far as this ABI can name it."""
    rights = WRITES_V1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


@dataclass
class Ruleset:
    """What a domain handles and the exceptions it allows; `restrict_self()` applies it."""

    abi: int
    handled_fs: int
    handled_net: int = 0
    scoped: int = 0
    rules: list[tuple[str, int]] = field(default_factory=list)

    def allow(self, paths: Iterable[str], rights: int) -> None:
        """Allow `rights` beneath each existing folder (or on each existing file)."""
        self.rules += [(path, rights) for path in paths if os.path.exists(path)]

    def restrict_self(self) -> None:
        """Apply to this process (and what it starts from now on); no_new_privs is set."""
        if self.abi < 1:
            raise LandlockError("this kernel has no Landlock (Linux 5.13+ with landlock in lsm=)")
        if (self.handled_net and self.abi < 4) or (self.scoped and self.abi < 6):
            raise LandlockError(f"Landlock ABI {self.abi} cannot restrict what was asked")
        if self.abi >= 6:
            attr = struct.pack("=QQQ", self.handled_fs, self.handled_net, self.scoped)
        elif self.abi >= 4:
            attr = struct.pack("=QQ", self.handled_fs, self.handled_net)
        else:
            attr = struct.pack("=Q", self.handled_fs)
        buf = ctypes.create_string_buffer(attr, len(attr))
        ruleset = _syscall(SYS_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), 0)
        try:
            for path, rights in self.rules:
                self._add(ruleset, path, rights & self.handled_fs)
            if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise LandlockError(f"no_new_privs: {os.strerror(ctypes.get_errno())}")
            _syscall(SYS_RESTRICT_SELF, ruleset, 0)
        finally:
            os.close(ruleset)

    @staticmethod
    def _add(ruleset: int, path: str, rights: int) -> None:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        try:
            if not os.path.isdir(path):
                rights &= FILE_RIGHTS
            attr = struct.pack("=Qi", rights, fd)
            buf = ctypes.create_string_buffer(attr, len(attr))
            _syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, buf, 0)
        finally:
            os.close(fd)
