"""System files a command may read (`/proc/meminfo`, `/etc/os-release`, …), kept as real files.

Real text tools such as `grep X /proc/meminfo` cannot ask the state, so the sandbox's wrappers
point these paths at HOST_DIR/files/<path>, rewritten here every time the state changes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .memory import render_meminfo

VIEW_DIR = "files"
VIRTUAL_PATHS = (
    "/proc/meminfo",
    "/proc/cpuinfo",
    "/proc/version",
    "/etc/hostname",
    "/etc/os-release",
    "/etc/lsb-release",
    "/etc/dgx-release",
)


def system_file(path: str, state: dict[str, Any]) -> str | None:
    """Text of a system file as this host has it, or None if the host has no such file."""
    if path == "/proc/meminfo":
        return render_meminfo(state)
    if path == "/proc/cpuinfo":
        return "".join(
            f"processor\t: {i}\nBogoMIPS\t: 2000.00\nCPU implementer\t: 0x41\n\n"
            for i in range(state["cpus"])
        )
    if path == "/etc/hostname":
        return state["hostname"] + "\n"
    if path == "/proc/version":
        return f"Linux version {state['kernel']} (buildd@bos03-arm64) {state['kernel_build']}\n"
    return state["files"].get(path)


def write_views(host_dir: Path, state: dict[str, Any]) -> None:
    for path in VIRTUAL_PATHS:
        target = host_dir / VIEW_DIR / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        text = system_file(path, state)
        if text is None:
            target.unlink(missing_ok=True)
            continue
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, target)
