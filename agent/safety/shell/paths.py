"""Which paths are harmless sinks and which belong to the system (writes there are destructive)."""

from __future__ import annotations

import re

HARMLESS_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
SYSTEM_PREFIXES = (
    "/etc", "/boot", "/proc", "/sys", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/var/lib",
    "/var/spool/cron", "/root",
)  # fmt: skip
BLOCK_DEVICE_RE = re.compile(r"^/dev/(sd|nvme|vd|hd|xvd|mmcblk|md|dm-|loop|mapper/)")
TOP_LEVEL_RE = re.compile(r"^/(home|var|opt|srv|mnt|data)?/*\**$|^~/?$")


def is_harmless_sink(path: str) -> bool:
    return path in HARMLESS_SINKS or re.fullmatch(r"/dev/fd/\d+", path) is not None


def is_system_path(path: str) -> bool:
    """/etc, /boot, /proc, /sys, block devices and the like: a write there can break the host."""
    clean = re.sub(r"/+", "/", path)
    if clean == "/" or BLOCK_DEVICE_RE.match(clean):
        return True
    return any(clean == prefix or clean.startswith(prefix + "/") for prefix in SYSTEM_PREFIXES)


def is_broad_path(path: str) -> bool:
    """`/`, `/home`, `/var/*`, `~` or a system path: recursive changes there hit too much."""
    return is_system_path(path) or TOP_LEVEL_RE.match(path) is not None
