"""Which paths are harmless sinks and which belong to the system (writes there are destructive).

A relative path is judged where it lands: the classifier keeps the working folder it knows (the
call's `cwd`, then every literal `cd`) in `CURRENT_DIR` while a rule runs.
"""

from __future__ import annotations

import posixpath
import re
from contextvars import ContextVar

HARMLESS_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
SYSTEM_PREFIXES = (
    "/etc", "/boot", "/proc", "/sys", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/var/lib",
    "/var/spool/cron", "/root", "/run/docker.sock", "/var/run/docker.sock", "/dev",
)  # fmt: skip
BLOCK_DEVICE_RE = re.compile(r"^/dev/(sd|nvme|vd|hd|xvd|mmcblk|md|dm-|loop|mapper/)")
NETWORK_DEVICE_RE = re.compile(r"^/dev/(tcp|udp)/")
TOP_LEVEL_RE = re.compile(r"^/(home|var|opt|srv|mnt|data)?/*\**$|^~/?$")
CURRENT_DIR: ContextVar[str | None] = ContextVar("CURRENT_DIR", default=None)
# Device files a read may open: anything else may act when opened or closed (`/dev/watchdog`
# reboots the host when closed without its magic byte, `/proc/kmsg` consumes kernel messages).
READABLE_DEVICES = frozenset(
    {"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/full", "/dev/stdin",
     "/dev/stdout", "/dev/stderr", "/dev/tty"}
)  # fmt: skip
READABLE_DEVICE_RE = re.compile(r"^/dev/(fd/\d+|shm(/.*)?|infiniband|disk(/by-[a-z-]+)?|pts)$")
DEVICE_MENTION_RE = re.compile(r"dev/|/proc/k")
GLOB_RE = re.compile(r"[*?\[]")
OPENED_SPECIAL = frozenset({"/proc/kmsg", "/proc/sysrq-trigger", "/proc/kcore"})
# Aliases the kernel resolves: a process's root is a path from / (for this judgement, the
# host's; a container's /dev holds device files too); its cwd, descriptors and mapped files
# lead to places only known on the host at run time.
PROC_ROOT_RE = re.compile(r"^/proc/(self|thread-self|\d+)(/task/\d+)?/root(?=/|$)")
PROC_OPAQUE_RE = re.compile(r"^/proc/(self|thread-self|\d+)(/task/\d+)?/(cwd|fd|map_files)/")


def resolve(path: str) -> str:
    """`path` made absolute against the known working folder (unchanged when none is known)."""
    if path == "~root" or path.startswith("~root/"):
        return "/root" + path[5:]
    if path.startswith(("/", "~")):
        return path
    here = CURRENT_DIR.get()
    return posixpath.join(here, path) if here else path


def normalised(path: str) -> str:
    """`path` made absolute where known, repeated slashes and `..` resolved, and a process's
    root (`/proc/self/root/dev/x` is `/dev/x`) taken off, before any match."""
    if not path:
        return path
    clean = posixpath.normpath(re.sub(r"/+", "/", resolve(path)))
    while root := PROC_ROOT_RE.match(clean):
        clean = clean[root.end() :] or "/"
    return clean


def device_problem(path: str, *, block_devices: bool = False) -> str | None:
    """Why opening `path` to read it is not read-only (a device file off the short list, or
    with `block_devices` a device that is not a disk)."""
    clean = normalised(path)
    if block_devices and (BLOCK_DEVICE_RE.match(clean) or clean.startswith("/dev/disk/")):
        return None
    if glob := GLOB_RE.search(clean):  # `/dev/watch*`, `/proc/kms?`: what could it match?
        if not clean.startswith(("/", "~")):  # after a `cd` to a folder known at run time
            return f"{clean} may match device files in a folder only known at run time"
        prefix = clean[: glob.start()]
        if any(special.startswith(prefix) for special in OPENED_SPECIAL):
            return f"{clean} may match a kernel file that acts when read"
        if prefix.startswith("/dev/") and not prefix.startswith(("/dev/shm/", "/dev/disk/")):
            return f"{clean} may match device files (only a short list is read-only)"
        return None
    if clean in OPENED_SPECIAL:
        return f"reading {clean} acts on the kernel"
    if PROC_OPAQUE_RE.match(clean):
        return f"{clean} opens whatever a process holds there, which may be a device"
    if not clean.startswith("/dev/") or clean in READABLE_DEVICES:
        return None
    if READABLE_DEVICE_RE.match(clean):
        return None
    return f"opening the device file {clean} may act on the device (only a short list is read-only)"


def mentions_device(text: str) -> bool:
    """Text only known at run time that names a device (`$(echo /dev/watchdog)`)."""
    return DEVICE_MENTION_RE.search(text) is not None


def is_harmless_sink(path: str) -> bool:
    return path in HARMLESS_SINKS or re.fullmatch(r"/dev/fd/\d+", path) is not None


def is_network_device(path: str) -> bool:
    """bash's `/dev/tcp/HOST/PORT` and `/dev/udp/…`: a redirection there opens a connection."""
    return NETWORK_DEVICE_RE.match(path) is not None


def is_system_path(path: str) -> bool:
    """/etc, /boot, /proc, /sys, block devices and the like: a write there can break the host."""
    clean = normalised(path)
    if clean == "/" or BLOCK_DEVICE_RE.match(clean):
        return True
    if clean.startswith("/dev/") and is_harmless_sink(clean):
        return False
    return any(clean == prefix or clean.startswith(prefix + "/") for prefix in SYSTEM_PREFIXES)


def is_broad_path(path: str) -> bool:
    """`/`, `/home`, `/var/*`, `~` or a system path: recursive changes there hit too much."""
    return is_system_path(path) or TOP_LEVEL_RE.match(normalised(path)) is not None
