"""The wall's address filter, on the host: TCP connects only to loopback and named addresses.

Landlock's network rules (ABI 4+) are per port, to any address, and absent before ABI 4. So a
walled call that names ports runs in a cgroup of its own with two cgroup-BPF programs on its
connect hooks (BPF_CGROUP_INET4_CONNECT / INET6_CONNECT, the mechanism systemd's
IPAddressAllow= uses): a connect passes only to 127.0.0.0/8, ::1, the addresses the call
names (v4-mapped forms included) and only to the ports it names; anything else fails with
EPERM. Attaching needs root (CAP_SYS_ADMIN or CAP_BPF) and a cgroup2 mount; where either is
missing the helper says why and the call gets no TCP beyond what Landlock alone allows.

Standard library only, Python 3.8+: it runs on the host (tools/wall/command.py ships it).
"""

from __future__ import annotations

import ctypes
import os
import struct

BPF_NR = {"x86_64": 321, "aarch64": 280}
BPF_PROG_LOAD, BPF_PROG_ATTACH = 5, 8
PROG_TYPE_CGROUP_SOCK_ADDR = 18
INET4_CONNECT, INET6_CONNECT = 10, 11
# struct bpf_sock_addr (include/uapi/linux/bpf.h): user_ip4 at 4, user_ip6[4] at 8, user_port 24
IP4_AT, IP6_AT, PORT_AT = 4, 8, 24
LDX_W, AND64_K, MOV64_K, JA, JEQ32_K, JNE32_K, EXIT = 0x61, 0x57, 0xB7, 0x05, 0x16, 0x56, 0x95

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _word(raw: bytes) -> int:
    """Four bytes in network order as the u32 a little-endian load of them gives."""
    return struct.unpack("<I", raw)[0]


def program(v6: bool, addresses: list[str], ports: list[int]) -> bytes:
    """The connect hook's eBPF: 1 (allow) for a listed address and port, else 0 (EPERM)."""
    import ipaddress  # here: only a call that names ports pays for it

    code: list[tuple[int, int, int, int, str | None]] = []  # op, dst, src, imm, label
    labels: dict[str, int] = {}
    v4 = [ipaddress.ip_address(a) for a in addresses if ":" not in a]
    v6s = [ipaddress.ip_address(a) for a in addresses if ":" in a]

    def op(c: int, dst: int = 0, src: int = 0, imm: int = 0, to: str | None = None) -> None:
        code.append((c, dst, src, imm, to))

    def check_v4(reg: int) -> None:  # reg holds the IPv4 address as loaded
        for address in v4:
            op(JEQ32_K, reg, 0, _word(address.packed), "port")
        op(AND64_K, reg, 0, 0xFF)
        op(JEQ32_K, reg, 0, 127, "port")  # 127.0.0.0/8: the first byte is the low one
        op(JA, to="deny")

    if v6:
        for index in range(4):
            op(LDX_W, 2 + index, 1, 0, f"+{IP6_AT + 4 * index}")
        for number, address in enumerate([ipaddress.ip_address("::1"), *v6s]):
            for index in range(4):
                part = _word(address.packed[4 * index : 4 * index + 4])
                op(JNE32_K, 2 + index, 0, part, f"next{number}")
            op(JA, to="port")
            labels[f"next{number}"] = len(code)
        mapped = _word(b"\0\0\xff\xff")
        op(JNE32_K, 2, 0, 0, "deny")
        op(JNE32_K, 3, 0, 0, "deny")
        op(JNE32_K, 4, 0, mapped, "deny")
        check_v4(5)
    else:
        op(LDX_W, 2, 1, 0, f"+{IP4_AT}")
        check_v4(2)
    labels["port"] = len(code)
    op(LDX_W, 3, 1, 0, f"+{PORT_AT}")
    for port in ports:
        op(JEQ32_K, 3, 0, _word(struct.pack("!H", port) + b"\0\0"), "allow")
    labels["deny"] = len(code)
    op(MOV64_K, 0, 0, 0)
    op(EXIT)
    labels["allow"] = len(code)
    op(MOV64_K, 0, 0, 1)
    op(EXIT)
    out = b""
    for pc, (c, dst, src, imm, to) in enumerate(code):
        offset = 0
        if to is not None and to.startswith("+"):
            offset = int(to[1:])
        elif to is not None:
            offset = labels[to] - pc - 1
        out += struct.pack("<BBhi", c, dst | src << 4, offset, ctypes.c_int32(imm).value)
    return out


def _bpf(command: int, attr: bytes) -> int:
    number = BPF_NR.get(os.uname().machine)
    if number is None:
        raise OSError(0, "no bpf() number for " + os.uname().machine)
    buf = ctypes.create_string_buffer(attr, len(attr))
    result = _libc.syscall(number, command, buf, len(attr))
    if result < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return int(result)


def _cgroup2_folder() -> str:
    """This process's cgroup2 folder (a hybrid host mounts cgroup2 beside v1)."""
    mount = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields, _, rest = line.partition(" - ")
            if rest.startswith("cgroup2 "):
                mount = fields.split(" ")[4]
                break
    if mount is None:
        raise OSError(0, "no cgroup2 mount")
    with open("/proc/self/cgroup") as f:
        for line in f:
            if line.startswith("0::"):
                return mount + line[3:].strip().rstrip("/")
    raise OSError(0, "no cgroup2 path for this process")


def filtered_cgroup(addresses: list[str], ports: list[int]) -> str:
    """A new cgroup whose connects pass only to loopback, `addresses` and `ports`; OSError
    says why it cannot be made."""
    folder = f"{_cgroup2_folder()}/scout-wall-{os.getpid()}-{os.urandom(4).hex()}"
    os.mkdir(folder, 0o700)
    try:
        target = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for v6, hook in ((False, INET4_CONNECT), (True, INET6_CONNECT)):
                insns = program(v6, addresses, ports)
                insn_buf = ctypes.create_string_buffer(insns, len(insns))
                license_buf = ctypes.create_string_buffer(b"GPL")
                load = struct.pack(
                    "<IIQQIIQII16sII",
                    PROG_TYPE_CGROUP_SOCK_ADDR, len(insns) // 8,
                    ctypes.addressof(insn_buf), ctypes.addressof(license_buf),
                    0, 0, 0, 0, 0, b"scout_wall", 0, hook,
                )  # fmt: skip
                prog = _bpf(BPF_PROG_LOAD, load)
                try:
                    _bpf(BPF_PROG_ATTACH, struct.pack("<IIIII", target, prog, hook, 0, 0))
                finally:
                    os.close(prog)
        finally:
            os.close(target)
    except OSError:
        remove(folder)
        raise
    return folder


def join(folder: str) -> None:
    with open(folder + "/cgroup.procs", "w") as f:
        f.write("0\n")


def remove(folder: str) -> None:
    """Remove the call's cgroup; one still holding a process stays (empty of files) until the
    host's init reaps it."""
    try:  # noqa: SIM105 - contextlib's imports cost more than the whole wall
        os.rmdir(folder)
    except OSError:
        pass
