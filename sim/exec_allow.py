"""The programs a walled-in sandbox command may execute (Landlock's list; fakehost/confinement.py).

Every entry is a resolved file: the shells, the Python of the fake tools' clients, the real tools
behind the host's bin folder, and the ELF interpreter (ld.so) each of them needs, since the kernel
checks execute permission on the interpreter too. (A loader runs any program it is handed; what
such a program may do is still bounded by the rest of the wall: no writes outside the host's
home, no sockets, no signals out.)
"""

from __future__ import annotations

import os
import shutil
import struct
import sys
from collections.abc import Iterable
from pathlib import Path

PT_INTERP = 3
_BASE = ("sh", "bash", "env")


def elf_interpreter(path: str) -> str | None:
    """The PT_INTERP path of an ELF executable (its dynamic loader), or None."""
    try:
        with open(path, "rb") as f:
            header = f.read(64)
            if header[:4] != b"\x7fELF":
                return None
            wide, order = header[4] == 2, "<" if header[5] == 1 else ">"
            if wide:
                (phoff,) = struct.unpack(order + "Q", header[32:40])
                entsize, count = struct.unpack(order + "HH", header[54:58])
            else:
                (phoff,) = struct.unpack(order + "I", header[28:32])
                entsize, count = struct.unpack(order + "HH", header[42:46])
            for index in range(count):
                f.seek(phoff + index * entsize)
                entry = f.read(entsize)
                if struct.unpack(order + "I", entry[:4])[0] != PT_INTERP:
                    continue
                if wide:
                    offset = struct.unpack(order + "Q", entry[8:16])[0]
                    size = struct.unpack(order + "Q", entry[32:40])[0]
                else:
                    offset = struct.unpack(order + "I", entry[4:8])[0]
                    size = struct.unpack(order + "I", entry[16:20])[0]
                f.seek(offset)
                return f.read(size).rstrip(b"\0").decode()
    except (OSError, struct.error):
        return None
    return None


def executables(real_tools: Iterable[str]) -> list[str]:
    """Resolved paths of the programs (and their loaders) that confined scripts may execute."""
    wanted = [sys.executable]
    for name in (*_BASE, *real_tools):
        found = shutil.which(name, path="/usr/bin:/bin")
        if found:
            wanted.append(found)
    resolved: set[str] = set()
    for path in wanted:
        real = os.path.realpath(path)
        resolved.add(real)
        loader = elf_interpreter(real)
        if loader:
            resolved.add(os.path.realpath(loader))
    return sorted(resolved)


def write_allow_file(path: Path, real_tools: Iterable[str]) -> None:
    path.write_text("\n".join(executables(real_tools)) + "\n")
