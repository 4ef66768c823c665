"""asyncssh's optional native libraries, found where the dynamic loader would find them.

Importing asyncssh looks for libnettle (the UMAC MACs) and liboqs (the sntrup761 key exchange)
with `ctypes.util.find_library`. On Linux that function runs `ldconfig -p` for each name and,
for a name the loader's cache lacks (liboqs, on most machines), compiles and links an empty
program with gcc and then runs ld to see whether the linker would find it: seven processes and
tens of milliseconds on every start of every face, before a byte goes to a host.

What `ctypes` can load by name is what the loader finds: the folders of LD_LIBRARY_PATH, then
its cache (/etc/ld.so.cache, what `ldconfig -p` prints). So while asyncssh imports, the lookup
reads those two, once: a library that only the compiler's search path holds is one that dlopen
would not load by name either. Off Linux, or where `ldconfig -p` cannot be read (musl), the
standard lookup runs unchanged.
"""

from __future__ import annotations

import contextlib
import ctypes.util
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

LDCONFIG = "/sbin/ldconfig"  # where ctypes.util runs it from too
# `\tlibnettle.so.8 (libc6,x86-64) => /lib/x86_64-linux-gnu/libnettle.so.8`
_CACHE_LINE = re.compile(r"^\s+(?P<name>\S+) \(.*\) => (?P<path>\S+)$")


def _elf_kind(path: Path) -> bytes | None:
    """ELF class and machine of a file (bytes 4 and 18-19 of its header), None if not ELF."""
    try:
        with path.open("rb") as file:
            header = file.read(20)
    except OSError:
        return None
    if len(header) < 20 or header[:4] != b"\x7fELF":
        return None
    return header[4:5] + header[18:20]


@cache
def _loader_cache() -> tuple[tuple[str, Path], ...] | None:
    """(file name, path) of every library in the loader's cache, None where it cannot be read."""
    try:
        listed = subprocess.run(
            [LDCONFIG, "-p"], capture_output=True, text=True, env={"LC_ALL": "C"}, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    entries = []
    for line in listed.splitlines():
        found = _CACHE_LINE.match(line)
        if found is not None:
            entries.append((found["name"], Path(found["path"])))
    return tuple(entries)


def loader_lookup(name: str) -> str | None:
    """The library `lib<name>.so…` that this process could load, found as the loader does."""
    ours = _elf_kind(Path("/proc/self/exe"))
    pattern = re.compile(rf"lib{re.escape(name)}\.so(\.[0-9.]+)?$")
    folders = [Path(f) for f in os.environ.get("LD_LIBRARY_PATH", "").split(":") if f]
    for folder in folders:
        with contextlib.suppress(OSError):
            for path in sorted(folder.iterdir(), reverse=True):  # newest version first
                if pattern.match(path.name) and _elf_kind(path) == ours:
                    return str(path)
    for file_name, path in _loader_cache() or ():
        if pattern.match(file_name) and _elf_kind(path) == ours:
            return str(path)
    return None


@contextlib.contextmanager
def _loader_lookups() -> Iterator[None]:
    standard = ctypes.util.find_library
    if not sys.platform.startswith("linux") or _loader_cache() is None:
        yield
        return
    ctypes.util.find_library = loader_lookup
    try:
        yield
    finally:
        ctypes.util.find_library = standard


def import_asyncssh() -> None:
    """Import asyncssh (once per process) with the loader's lookup; call before any module
    imports it."""
    if "asyncssh" in sys.modules:
        return
    with _loader_lookups():
        import asyncssh  # noqa: F401
