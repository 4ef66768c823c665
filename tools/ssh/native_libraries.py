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

`tools.ssh` installs `lookup_on_asyncssh_import` rather than importing asyncssh itself: a
command that never opens a connection through it (`scout recon` of hosts OpenSSH's own client
reaches) then never pays for importing it, and the first `import asyncssh`, wherever it comes
from, still runs with the loader's lookup.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.abc import Loader

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
    import ctypes.util  # here: only a process that imports asyncssh looks libraries up

    standard = ctypes.util.find_library
    if not sys.platform.startswith("linux") or _loader_cache() is None:
        yield
        return
    ctypes.util.find_library = loader_lookup
    try:
        yield
    finally:
        ctypes.util.find_library = standard


class _LookupWhileLoading:
    """asyncssh's own loader, run with the loader's lookup in place: its submodules (where
    `find_library` is called) are imported while its package module executes. A loader by its
    methods, as the import system asks (not an importlib.abc.Loader: importing importlib.abc
    loads importlib.resources, tempfile and more, milliseconds at every start of every face)."""

    def __init__(self, inner: Loader) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        with _loader_lookups():
            self.inner.exec_module(module)


class _AsyncsshFinder:
    """Finds asyncssh the standard way, once, and wraps its loader in _LookupWhileLoading (a
    meta path finder by its method, as _LookupWhileLoading is a loader)."""

    def find_spec(
        self, name: str, path: object = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name != "asyncssh":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _LookupWhileLoading(spec.loader)
        return spec


def lookup_on_asyncssh_import() -> None:
    """Make the first `import asyncssh` of this process use the loader's lookup, without
    importing it now; nothing to do where it is imported already or this is installed."""
    if "asyncssh" in sys.modules or any(isinstance(f, _AsyncsshFinder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _AsyncsshFinder())
