"""The compiled fake-tool client (sim/fakehost/client.c), built once per simulator process.

A fake command's start-up is most of what a simulated host costs: the Python client
(client.py) spends about 15 ms of CPU starting an interpreter, the compiled one about one.
Without a C compiler, or when the build fails, hosts keep the Python client: same behaviour,
only slower (`client_binary` says why once, on stderr).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).parent / "fakehost" / "client.c"
FAKEHOST_PARENT = Path(__file__).parent
BUILD_TIMEOUT_S = 60.0
COMPILERS = ("cc", "gcc", "clang")


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@functools.cache
def client_binary() -> Path | None:
    """The built client, or None when this machine cannot build it."""
    compiler = next(filter(None, (shutil.which(name) for name in COMPILERS)), None)
    if compiler is None:
        print("sim: no C compiler; fake tools use the slower Python client", file=sys.stderr)
        return None
    folder = Path(tempfile.mkdtemp(prefix="scout-sim-client-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    binary = folder / "client"
    command = [
        compiler, "-O2", "-o", str(binary), str(SOURCE),
        f"-DSCOUT_PYTHON={_c_string(sys.executable)}",
        f"-DSCOUT_FAKEHOST_PARENT={_c_string(str(FAKEHOST_PARENT))}",
    ]  # fmt: skip
    try:
        built = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"sim: building the fake-tool client failed ({exc}); using Python", file=sys.stderr)
        return None
    if built.returncode != 0:
        print(
            f"sim: building the fake-tool client failed; using Python:\n{built.stderr}",
            file=sys.stderr,
        )
        return None
    return binary


def install_client(binary: Path, target: Path) -> None:
    """Place the client at `target` (its name is the tool it serves): a hard link if it can."""
    try:
        os.link(binary, target)
    except OSError:
        shutil.copy2(binary, target)
