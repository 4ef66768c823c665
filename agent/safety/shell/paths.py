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


def resolve(path: str) -> str:
    """`path` made absolute against the known working folder (unchanged when none is known)."""
    if path == "~root" or path.startswith("~root/"):
        return "/root" + path[5:]
    if path.startswith(("/", "~")):
        return path
    here = CURRENT_DIR.get()
    return posixpath.join(here, path) if here else path


def is_harmless_sink(path: str) -> bool:
    return path in HARMLESS_SINKS or re.fullmatch(r"/dev/fd/\d+", path) is not None


def is_network_device(path: str) -> bool:
    """bash's `/dev/tcp/HOST/PORT` and `/dev/udp/…`: a redirection there opens a connection."""
    return NETWORK_DEVICE_RE.match(path) is not None


def is_system_path(path: str) -> bool:
    """/etc, /boot, /proc, /sys, block devices and the like: a write there can break the host."""
    clean = posixpath.normpath(re.sub(r"/+", "/", resolve(path))) if path else path
    if clean == "/" or BLOCK_DEVICE_RE.match(clean):
        return True
    if clean.startswith("/dev/") and is_harmless_sink(clean):
        return False
    return any(clean == prefix or clean.startswith(prefix + "/") for prefix in SYSTEM_PREFIXES)


def is_broad_path(path: str) -> bool:
    """`/`, `/home`, `/var/*`, `~` or a system path: recursive changes there hit too much."""
    return is_system_path(path) or TOP_LEVEL_RE.match(path) is not None
