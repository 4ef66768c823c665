"""A seccomp-bpf filter for sandbox commands: no sockets, no changes Landlock does not cover.

Landlock (landlock.py) walls in writes, TCP ports, signals and abstract sockets, but not
pathname Unix sockets (/var/run/docker.sock is root-equivalent), UDP, netlink or raw sockets,
nor file attributes: a process may chmod, chown or re-time any file it owns, wherever it is.
This filter (Documentation/userspace-api/seccomp_filter.rst) refuses, for the process and every
child:

- socket() of any family (EACCES). A fake tool reaches its host's tool server through a socket
  the server handed over before the command was confined (wire.BROKER_FD) and a socketpair();
  socketpair() is allowed only for connected AF_UNIX stream or seqpacket pairs, which can reach
  nothing but each other (a datagram pair could sendto() any pathname socket);
- io_uring (its IORING_OP_SOCKET makes sockets without socket());
- chmod/chown/utime/xattr changes, and the kernel keyrings (EPERM);
- changing another process's priority, scheduling or limits (only pid 0, itself, is allowed);
- any syscall of a foreign ABI (x86 `int 0x80`, x32), whose numbers the filter does not check.

Syscall numbers come from the kernel's tables (arch/x86/entry/syscalls/syscall_64.tbl and
include/uapi/asm-generic/unistd.h, which aarch64 uses); calls newer than a kernel simply do not
exist there.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
import sys
from dataclasses import dataclass

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
LD_ABS_W, JEQ_K, JGE_K, AND_K, RET_K = 0x20, 0x15, 0x35, 0x54, 0x06
AF_UNIX, SOCK_STREAM, SOCK_SEQPACKET, SOCK_TYPE_MASK = 1, 1, 5, 0xF
X32_SYSCALL_BIT = 0x40000000
LANDLOCK_CALLS = (444, 445, 446)  # create_ruleset, add_rule, restrict_self: the same everywhere

# Refused outright (EPERM). Names missing from an arch's table do not exist there.
DENIED = (
    "io_uring_setup", "keyctl", "add_key", "request_key",
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
    "utime", "utimes", "utimensat", "futimesat", "file_setattr", "ioprio_set",
    "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
    "setxattrat", "removexattrat",
)  # fmt: skip
# Allowed only when their first argument, the process, is 0 (the caller itself).
SELF_ONLY = ("sched_setparam", "sched_setscheduler", "sched_setaffinity", "sched_setattr",
             "prlimit64")  # fmt: skip


@dataclass(frozen=True)
class Arch:
    audit: int  # AUDIT_ARCH_* (include/uapi/linux/audit.h)
    numbers: dict[str, int]
    has_x32: bool


def _table(text: str) -> dict[str, int]:
    words = text.split()
    return {name: int(number) for name, number in zip(words[::2], words[1::2], strict=True)}


_COMMON = "io_uring_setup 425 fchmodat2 452 setxattrat 463 removexattrat 466 file_setattr 469"
ARCHES = {
    "x86_64": Arch(
        0xC000003E,
        _table(
            _COMMON
            + """
            socket 41  socketpair 53  keyctl 250  add_key 248  request_key 249  chmod 90
            fchmod 91  fchmodat 268  chown 92  fchown 93  lchown 94  fchownat 260  utime 132
            utimes 235  utimensat 280  futimesat 261  setxattr 188  lsetxattr 189
            fsetxattr 190  removexattr 197  lremovexattr 198  fremovexattr 199
            setpriority 141  sched_setparam 142  sched_setscheduler 144
            sched_setaffinity 203  sched_setattr 314  ioprio_set 251  prlimit64 302
            """
        ),
        has_x32=True,
    ),
    "aarch64": Arch(
        0xC00000B7,
        _table(
            _COMMON
            + """
            socket 198  socketpair 199  keyctl 219  add_key 217  request_key 218  fchmod 52
            fchmodat 53  fchownat 54  fchown 55  utimensat 88  setxattr 5  lsetxattr 6
            fsetxattr 7  removexattr 14  lremovexattr 15  fremovexattr 16  setpriority 140
            sched_setparam 118  sched_setscheduler 119  sched_setaffinity 122
            sched_setattr 274  ioprio_set 30  prlimit64 261
            """
        ),
        has_x32=False,
    ),
}


class SeccompError(Exception):
    """The filter cannot be built for this machine, or the kernel refused it."""


class _Program:
    """A tiny BPF assembler: instructions with jumps to named labels."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int, str | None, str | None]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def op(self, code: int, k: int = 0) -> None:
        self.code.append((code, k, None, None))

    def jump(self, code: int, k: int, true: str | None, false: str | None) -> None:
        self.code.append((code, k, true, false))

    def load_arg(self, index: int) -> None:
        self.op(LD_ABS_W, 16 + 8 * index)  # seccomp_data.args[index], its low 32 bits (LE)

    def assemble(self) -> bytes:
        out = bytearray()
        for pc, (code, k, true, false) in enumerate(self.code):
            jt = self.labels[true] - pc - 1 if true else 0
            jf = self.labels[false] - pc - 1 if false else 0
            out += struct.pack("=HBBI", code, jt, jf, k & 0xFFFFFFFF)
        return bytes(out)


def build(arch: Arch, *, hide_landlock: bool = False) -> bytes:
    """The filter program for `arch`, as the kernel reads it (struct sock_filter[]); with
    `hide_landlock` the Landlock calls fail as on a kernel without it (ENOSYS)."""
    numbers = arch.numbers
    p = _Program()
    p.op(LD_ABS_W, 4)  # seccomp_data.arch
    p.jump(JEQ_K, arch.audit, None, "deny")
    p.op(LD_ABS_W, 0)  # seccomp_data.nr
    if arch.has_x32:
        p.jump(JGE_K, X32_SYSCALL_BIT, "deny", None)
    if hide_landlock:
        for number in LANDLOCK_CALLS:
            p.jump(JEQ_K, number, "nosys", None)
    p.jump(JEQ_K, numbers["socket"], "no_socket", None)
    for name in DENIED:
        if name in numbers:
            p.jump(JEQ_K, numbers[name], "deny", None)
    p.jump(JEQ_K, numbers["socketpair"], "pair", None)
    p.jump(JEQ_K, numbers["setpriority"], "priority", None)
    for name in SELF_ONLY:
        p.jump(JEQ_K, numbers[name], "self_only", None)
    p.op(RET_K, RET_ALLOW)
    p.label("self_only")
    p.load_arg(0)
    p.jump(JEQ_K, 0, "allow", "deny")
    p.label("priority")  # setpriority(PRIO_PROCESS, 0, n): this process only
    p.load_arg(0)
    p.jump(JEQ_K, 0, None, "deny")
    p.load_arg(1)
    p.jump(JEQ_K, 0, "allow", "deny")
    p.label("pair")
    p.load_arg(0)
    p.jump(JEQ_K, AF_UNIX, None, "no_socket")
    p.load_arg(1)
    p.op(AND_K, SOCK_TYPE_MASK)
    p.jump(JEQ_K, SOCK_STREAM, "allow", None)
    p.jump(JEQ_K, SOCK_SEQPACKET, "allow", "no_socket")
    p.label("allow")
    p.op(RET_K, RET_ALLOW)
    p.label("deny")
    p.op(RET_K, RET_ERRNO | errno.EPERM)
    p.label("no_socket")
    p.op(RET_K, RET_ERRNO | errno.EACCES)
    p.label("nosys")
    p.op(RET_K, RET_ERRNO | errno.ENOSYS)
    return p.assemble()


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def native_arch() -> Arch:
    arch = ARCHES.get(platform.machine())
    if arch is None or sys.byteorder != "little":
        raise SeccompError(f"no sandbox filter for {platform.machine()}")
    return arch


def install(*, hide_landlock: bool = False) -> None:
    """Apply the filter to this (single-threaded) process and all it starts; no_new_privs set."""
    program = build(native_arch(), hide_landlock=hide_landlock)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _Fprog(len(program) // 8, ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise SeccompError(f"no_new_privs: {os.strerror(ctypes.get_errno())}")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise SeccompError(f"seccomp filter refused: {os.strerror(ctypes.get_errno())}")
