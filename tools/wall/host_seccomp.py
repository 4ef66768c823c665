"""The wall's seccomp part, on the host: the kernel channels no file rule reaches, closed.

A classic BPF filter, built per architecture from the kernel's syscall tables
(arch/x86/entry/syscalls/syscall_64.tbl; include/uapi/asm-generic/unistd.h for aarch64):

- sockets: no Unix socket at all (a daemon's pathname socket, D-Bus, /dev/log, an abstract
  socket: each starts with socket(AF_UNIX); socketpair stays, it reaches nothing outside);
  netlink only for the families reads use (route, sock_diag, generic, rdma), whose changes
  need the capabilities the wall cuts; IPv4/IPv6 only as TCP streams and only when the call
  names ports (Landlock and the address filter, host_netfilter.py, judge where they go);
- SysV IPC, POSIX message queues, keyrings, io_uring: every call refused;
- truncate(2), chmod, chown, utime and xattrs (Landlock does not cover them before ABI 3);
- priority, scheduling and limit changes of any process but the caller.

Standard library only, Python 3.8+: it runs on the host (tools/wall/command.py ships it).
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys

RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
LD_W, JEQ, JGE, AND, RET = 0x20, 0x15, 0x35, 0x54, 0x06
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, SOCK_STREAM = 1, 2, 10, 16, 1
NETLINK_READS = (0, 4, 16, 20)  # NETLINK_ROUTE, _SOCK_DIAG, _GENERIC, _RDMA (linux/netlink.h)
X32_BIT = 0x40000000
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
DENIED = (
    "io_uring_setup", "truncate", "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown",
    "lchown", "fchownat", "utime", "utimes", "utimensat", "futimesat", "setxattr", "lsetxattr",
    "fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "setxattrat", "removexattrat",
    "file_setattr",
    "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop", "semctl",
    "shmget", "shmat", "shmdt", "shmctl",
    "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
    "add_key", "request_key", "keyctl",
)  # fmt: skip
SELF_ONLY = ("sched_setparam", "sched_setscheduler", "sched_setaffinity", "sched_setattr",
             "prlimit64")  # fmt: skip
_COMMON = "io_uring_setup 425 fchmodat2 452 setxattrat 463 removexattrat 466 file_setattr 469"
# The IPC, mqueue and key calls share numbers across the generic table (aarch64).
_GENERIC_IPC = (
    " mq_open 180 mq_unlink 181 mq_timedsend 182 mq_timedreceive 183 mq_notify 184"
    " mq_getsetattr 185 msgget 186 msgctl 187 msgrcv 188 msgsnd 189 semget 190 semctl 191"
    " semtimedop 192 semop 193 shmget 194 shmctl 195 shmat 196 shmdt 197"
    " add_key 217 request_key 218 keyctl 219"
)
ARCHES = {
    "x86_64": (
        0xC000003E,
        True,
        _COMMON + " socket 41 truncate 76 chmod 90 fchmod 91 fchmodat 268 chown 92 fchown 93"
        " lchown 94 fchownat 260 utime 132 utimes 235 utimensat 280 futimesat 261 setxattr 188"
        " lsetxattr 189 fsetxattr 190 removexattr 197 lremovexattr 198 fremovexattr 199"
        " setpriority 141 sched_setparam 142 sched_setscheduler 144 sched_setaffinity 203"
        " sched_setattr 314 prlimit64 302"
        " shmget 29 shmat 30 shmctl 31 shmdt 67 semget 64 semop 65 semctl 66 semtimedop 220"
        " msgget 68 msgsnd 69 msgrcv 70 msgctl 71 mq_open 240 mq_unlink 241 mq_timedsend 242"
        " mq_timedreceive 243 mq_notify 244 mq_getsetattr 245 add_key 248 request_key 249"
        " keyctl 250",
    ),
    "aarch64": (
        0xC00000B7,
        False,
        _COMMON + _GENERIC_IPC + " socket 198 truncate 45 fchmod 52 fchmodat 53 fchownat 54"
        " fchown 55 utimensat 88 setxattr 5 lsetxattr 6 fsetxattr 7 removexattr 14"
        " lremovexattr 15 fremovexattr 16 setpriority 140 sched_setparam 118"
        " sched_setscheduler 119 sched_setaffinity 122 sched_setattr 274 prlimit64 261",
    ),
}


def syscall_numbers(arch: str) -> dict[str, int]:
    words = ARCHES[arch][2].split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}


def seccomp_program(arch: str, tcp: bool) -> bytes:
    """The filter as struct sock_filter[]: allow all but what the module docstring names."""
    audit, has_x32, _ = ARCHES[arch]
    nr = syscall_numbers(arch)
    code: list[tuple[int, int, str | None, str | None]] = []
    labels: dict[str, int] = {}

    def op(c: int, k: int = 0, true: str | None = None, false: str | None = None) -> None:
        code.append((c, k, true, false))

    op(LD_W, 4)
    op(JEQ, audit, None, "deny")
    op(LD_W, 0)
    if has_x32:
        op(JGE, X32_BIT, "deny", None)
    op(JEQ, nr["socket"], "socket", None)
    for name in DENIED:
        if name in nr:
            op(JEQ, nr[name], "deny", None)
    op(JEQ, nr["setpriority"], "priority", None)
    for name in SELF_ONLY:
        op(JEQ, nr[name], "self", None)
    op(RET, RET_ALLOW)
    labels["self"] = len(code)
    op(LD_W, 16)
    op(JEQ, 0, "allow", "deny")
    labels["priority"] = len(code)  # setpriority(which, who=0): the caller itself
    op(LD_W, 24)
    op(JEQ, 0, "allow", "deny")
    labels["socket"] = len(code)
    op(LD_W, 16)
    op(JEQ, AF_NETLINK, "netlink", None)
    if tcp:
        op(JEQ, AF_INET, "stream", None)
        op(JEQ, AF_INET6, "stream", "nosock")
        labels["stream"] = len(code)
        op(LD_W, 24)
        op(AND, 0xF)
        op(JEQ, SOCK_STREAM, "allow", "nosock")
    else:
        op(RET, RET_ERRNO | errno.EACCES)
    labels["netlink"] = len(code)
    op(LD_W, 32)
    for protocol in NETLINK_READS:
        op(JEQ, protocol, "allow", None)
    op(RET, RET_ERRNO | errno.EACCES)
    labels["allow"] = len(code)
    op(RET, RET_ALLOW)
    labels["deny"] = len(code)
    op(RET, RET_ERRNO | errno.EPERM)
    labels["nosock"] = len(code)
    op(RET, RET_ERRNO | errno.EACCES)
    out = b""
    for pc, (c, k, true, false) in enumerate(code):
        jt = labels[true] - pc - 1 if true else 0
        jf = labels[false] - pc - 1 if false else 0
        out += struct.pack("=HBBI", c, jt, jf, k & 0xFFFFFFFF)
    return out


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def seccomp_available() -> bool:
    with open("/proc/self/status") as f:
        return any(line.startswith("Seccomp:") for line in f)


def install(tcp: bool) -> str | None:
    """Put the filter on this process (no_new_privs already set); why not, or None."""
    arch = os.uname().machine
    if arch not in ARCHES or sys.byteorder != "little":
        return "no seccomp filter for " + arch
    program = seccomp_program(arch, tcp)
    buf = ctypes.create_string_buffer(program, len(program))
    fprog = _Fprog(len(program) // 8, ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return "seccomp filter refused: " + os.strerror(ctypes.get_errno())
    return None
