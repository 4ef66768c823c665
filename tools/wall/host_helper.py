"""The wall's host side: run a command so the host's kernel, not a guess, keeps it read-only.

Scout sends this file to a host once (cached there by its hash, tools/wall/command.py) and runs

    python3 -I -S HELPER run SPEC -- PROGRAM ARGS...   (SPEC: `ports=P,Q scratch=1`)

`run` builds the wall and then becomes PROGRAM (or, with a scratch folder, waits for it and
removes the folder). The wall, all or nothing:

- Landlock (Linux 5.13+): every right that changes the file system is handled, and allowed only
  beneath the call's scratch folder, on /dev/null-like sinks and on the GPU and RDMA device
  nodes whose drivers need a writable open to be read at all (nvidia-smi opens /dev/nvidiactl
  read-write; test-hosts.md). ABI 4+: TCP bind and connect handled, connect allowed only to the
  ports SPEC names. ABI 6+: signals and abstract Unix sockets scoped to the wall.
- seccomp: no socket() but Unix and netlink (and TCP streams when SPEC names ports), no
  io_uring, no truncate(2), no chmod/chown/utime/xattr (Landlock does not cover them), no
  priority, scheduling or limit change of another process.
- capabilities: a root caller (login root, or `sudo -n` in front) keeps only the two that read
  (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), in every set and the bounding set, so CAP_NET_ADMIN,
  CAP_SYS_ADMIN, CAP_SYS_MODULE and the rest are gone for the command and all it starts.
- no_new_privs: no setuid program (sudo, su) can give any of that back.

When a part cannot be built the command does not run: the helper prints `@@scout-wall unwalled
REASON` on stdout and exits 199.

Why python3 and not a compiled helper: every host Scout manages (DGX OS, Ubuntu, Debian) ships
python3 with ctypes, on every architecture (a Spark is aarch64, an HGX node x86_64), so one
text file serves all of them, can be read by an operator before it runs, and needs no compiler
on the host or binaries per arch in Scout. Its cost, the interpreter's start (-I -S, ~15 ms),
is inside the per-call budget (bench/wall.py). It must run on the oldest python3 a supported
host has (3.8), with the standard library only.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys

UNWALLED_STATUS = 199
UNWALLED_MARK = "@@scout-wall unwalled"
WALL_ENV = "SCOUT_WALL"  # what the command learns: the wall it runs in

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on every arch
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2
WRITE_FILE, REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 2, 16, 32, 64, 128
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 256, 512, 1024, 2048, 4096
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2
FILE_RIGHTS = 1 | WRITE_FILE | 4 | TRUNCATE | IOCTL_DEV  # what a rule on a file may carry

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, PR_CAPBSET_DROP, PR_CAP_AMBIENT = 38, 22, 24, 47
SECCOMP_MODE_FILTER, PR_CAP_AMBIENT_CLEAR_ALL = 2, 4
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2
KEPT_CAPS = (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH)
CAPABILITY_VERSION_3 = 0x20080522

# Sinks every program may write, and device nodes a driver opens read-write just to be read
# (their ioctls are what the wall cannot judge: tools/wall/limits.py lists them).
SINKS = ("/dev/null", "/dev/zero", "/dev/full")
DEVICE_PREFIXES = ("/dev/nvidia", "/dev/infiniband")

RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
LD_W, JEQ, JGE, AND = 0x20, 0x15, 0x35, 0x54
RET = 0x06
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, SOCK_STREAM = 1, 2, 10, 16, 1
X32_BIT = 0x40000000
DENIED = (
    "io_uring_setup", "truncate", "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown",
    "lchown", "fchownat", "utime", "utimes", "utimensat", "futimesat", "setxattr", "lsetxattr",
    "fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "setxattrat", "removexattrat",
    "file_setattr",
)  # fmt: skip
SELF_ONLY = ("sched_setparam", "sched_setscheduler", "sched_setaffinity", "sched_setattr",
             "prlimit64")  # fmt: skip
# Syscall numbers: arch/x86/entry/syscalls/syscall_64.tbl; include/uapi/asm-generic/unistd.h.
_COMMON = "io_uring_setup 425 fchmodat2 452 setxattrat 463 removexattrat 466 file_setattr 469"
ARCHES = {
    "x86_64": (
        0xC000003E,
        True,
        _COMMON + " socket 41 truncate 76 chmod 90 fchmod 91 fchmodat 268 chown 92 fchown 93"
        " lchown 94 fchownat 260 utime 132 utimes 235 utimensat 280 futimesat 261 setxattr 188"
        " lsetxattr 189 fsetxattr 190 removexattr 197 lremovexattr 198 fremovexattr 199"
        " setpriority 141 sched_setparam 142 sched_setscheduler 144 sched_setaffinity 203"
        " sched_setattr 314 prlimit64 302",
    ),
    "aarch64": (
        0xC00000B7,
        False,
        _COMMON + " socket 198 truncate 45 fchmod 52 fchmodat 53 fchownat 54 fchown 55"
        " utimensat 88 setxattr 5 lsetxattr 6 fsetxattr 7 removexattr 14 lremovexattr 15"
        " fremovexattr 16 setpriority 140 sched_setparam 118 sched_setscheduler 119"
        " sched_setaffinity 122 sched_setattr 274 prlimit64 261",
    ),
}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class Unwalled(Exception):
    """A part of the wall cannot be built here; the command must not run."""


def _syscall(number: int, *args: object) -> int:
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
        _syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, attr, 0)
    finally:
        os.close(fd)


def device_nodes() -> list[str]:
    names = []
    for name in sorted(os.listdir("/dev")):
        path = "/dev/" + name
        if any(path.startswith(prefix) for prefix in DEVICE_PREFIXES):
            names.append(path)
    return names


def landlock(abi: int, scratch: str | None, ports: list[int]) -> None:
    """Read-only everywhere but the scratch folder, sinks and devices; TCP only to `ports`."""
    writes = fs_writes(abi)
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET if abi >= 6 else 0
    if abi >= 6:
        attr = struct.pack("=QQQ", writes, net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", writes, net)
    else:
        attr = struct.pack("=Q", writes)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _syscall(SYS_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), 0)
    try:
        if scratch:
            _add_path(ruleset, scratch, writes)
        for sink in SINKS:
            _add_path(ruleset, sink, WRITE_FILE | (TRUNCATE & writes))
        for node in device_nodes():
            _add_path(ruleset, node, WRITE_FILE | (IOCTL_DEV & writes))
        for port in ports if net else []:
            rule = ctypes.create_string_buffer(struct.pack("=QQ", NET_CONNECT_TCP, port), 16)
            _syscall(SYS_ADD_RULE, ruleset, RULE_NET_PORT, rule, 0)
        no_new_privs()
        _syscall(SYS_RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)


def no_new_privs() -> None:
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise Unwalled("no_new_privs: " + os.strerror(ctypes.get_errno()))


def _effective_caps() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return 0


def drop_root_powers() -> bool:
    """Keep only the reading capabilities, for good; False when there was nothing to drop."""
    if _effective_caps() == 0:
        return False
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        if cap not in KEPT_CAPS and _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise Unwalled(f"dropping capability {cap}: {os.strerror(ctypes.get_errno())}")
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    kept = sum(1 << cap for cap in KEPT_CAPS) & _effective_caps()
    header = struct.pack("=Ii", CAPABILITY_VERSION_3, 0)
    data = struct.pack("=6I", kept, kept, 0, 0, 0, 0)  # effective, permitted, inheritable
    if _libc.capset(ctypes.c_char_p(header), ctypes.c_char_p(data)) != 0:
        raise Unwalled("capset: " + os.strerror(ctypes.get_errno()))
    return True


def seccomp_program(arch: str, tcp: bool) -> bytes:
    """The filter as struct sock_filter[]: allow all but what the module docstring names."""
    audit, has_x32, table = ARCHES[arch]
    words = table.split()
    nr = {name: int(number) for name, number in zip(words[::2], words[1::2], strict=False)}
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
    op(JEQ, AF_UNIX, "allow", None)
    op(JEQ, AF_NETLINK, "allow", None)
    if tcp:
        op(JEQ, AF_INET, "stream", None)
        op(JEQ, AF_INET6, "stream", "nosock")
        labels["stream"] = len(code)
        op(LD_W, 24)
        op(AND, 0xF)
        op(JEQ, SOCK_STREAM, "allow", "nosock")
    else:
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


def seccomp(tcp: bool) -> None:
    arch = os.uname().machine
    if arch not in ARCHES or sys.byteorder != "little":
        raise Unwalled("no seccomp filter for " + arch)
    program = seccomp_program(arch, tcp)
    buf = ctypes.create_string_buffer(program, len(program))
    fprog = _Fprog(len(program) // 8, ctypes.addressof(buf))
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise Unwalled("seccomp filter refused: " + os.strerror(ctypes.get_errno()))


def seccomp_available() -> bool:
    with open("/proc/self/status") as f:
        return any(line.startswith("Seccomp:") for line in f)


def build_wall(abi: int, scratch: str | None, ports: list[int]) -> str:
    """Put the whole wall on this process; return how it is described to the command."""
    if abi < 1:
        raise Unwalled("no Landlock in this kernel (Linux 5.13+, with landlock in lsm=)")
    if not seccomp_available():
        raise Unwalled("no seccomp in this kernel")
    root = drop_root_powers()
    landlock(abi, scratch, ports)
    seccomp(bool(ports))
    parts = [f"landlock-abi-{abi}", "seccomp", "no-new-privs"]
    if root:
        parts.append("root-read-only")
    if ports:
        parts.append("tcp-" + "-".join(str(p) for p in ports))
    return ",".join(parts)


def make_scratch() -> str | None:
    """A private folder for the call (TMPDIR, else /tmp, else the working folder), or None
    where nothing is writable. Plain os calls: tempfile's imports cost more than the wall."""
    name = f"scout-wall-{os.getpid()}-{os.urandom(6).hex()}"
    for base in (os.environ.get("TMPDIR"), "/tmp", os.getcwd()):
        if not base:
            continue
        try:
            path = os.path.join(base, name)
            os.mkdir(path, 0o700)
            return path
        except OSError:
            continue
    return None


def remove_tree(path: str) -> None:
    """Remove the scratch folder and what the command left in it, as far as it can."""
    steps = []
    for folder, folders, files in os.walk(path, topdown=False):
        steps += [(os.unlink, os.path.join(folder, name)) for name in files]
        for name in folders:
            target = os.path.join(folder, name)
            steps.append((os.unlink if os.path.islink(target) else os.rmdir, target))
    steps.append((os.rmdir, path))
    for remove, target in steps:
        try:
            remove(target)
        except OSError:
            continue


def run(spec_text: str, argv: list[str]) -> int:
    spec = dict(part.partition("=")[::2] for part in spec_text.split())
    ports = [int(port) for port in spec.get("ports", "").split(",") if port]
    abi = landlock_abi()
    scratch = make_scratch() if spec.get("scratch") == "1" else None
    if scratch is None:
        os.environ[WALL_ENV] = build_wall(abi, None, ports)
        os.execvp(argv[0], argv)
    child = os.fork()
    if child == 0:
        try:
            os.environ[WALL_ENV] = build_wall(abi, scratch, ports)
            os.environ["TMPDIR"] = scratch
            os.execvp(argv[0], argv)
        except Unwalled as exc:
            print(f"{UNWALLED_MARK} {exc}", flush=True)
            os._exit(UNWALLED_STATUS)
        except OSError as exc:
            print(f"{argv[0]}: {exc.strerror}", file=sys.stderr, flush=True)
            os._exit(127)
    import _signal  # the C module: `signal` would import enum, slower than the whole wall

    for number in (1, 2, 15):  # HUP, INT, TERM (the same on every Linux arch): pass them on
        _signal.signal(number, lambda got, _frame: os.kill(child, got))
    _, status = os.waitpid(child, 0)
    remove_tree(scratch)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def main(args: list[str]) -> int:
    if len(args) < 4 or args[0] != "run" or args[2] != "--":
        print("usage: helper run SPEC -- PROGRAM [ARGS...]", file=sys.stderr)
        return 2
    try:
        return run(args[1], args[3:])
    except Unwalled as exc:
        print(f"{UNWALLED_MARK} {exc}", flush=True)
        return UNWALLED_STATUS
    except OSError as exc:
        print(f"{args[3]}: {exc.strerror}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
