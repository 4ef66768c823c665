"""Importing Scout's SSH layer runs no compiler or linker: asyncssh's optional libraries are
looked up where the dynamic loader looks (tools/ssh/native_libraries.py), and found there."""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.ssh.native_libraries import loader_lookup

REPO = Path(__file__).parents[2]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's lookup")

# Stands in for gcc, cc and ld: notes that it was run, then runs the real one.
RECORDER = """#!/bin/sh
echo "$(basename "$0") $*" >> "{log}"
PATH="{path}" exec "$(basename "$0")" "$@"
"""


def test_importing_the_ssh_layer_runs_no_compiler(tmp_path: Path) -> None:
    log = tmp_path / "ran.txt"
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("gcc", "cc", "ld"):
        (tools / name).write_text(RECORDER.format(log=log, path=os.environ["PATH"]))
        (tools / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{tools}:{os.environ['PATH']}", "PYTHONPATH": str(REPO)}
    code = "import tools.ssh, asyncssh.crypto.umac as umac\nprint(umac._nettle_lib or '')\n"
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    assert not log.exists(), log.read_text()
    nettle = ctypes.util.find_library("nettle")  # the standard lookup, compilers and all
    found = done.stdout.strip()
    assert (Path(found).name if found else None) == nettle


def test_the_loader_lookup_agrees_with_the_standard_one() -> None:
    for name in ("c", "m", "ssl", "crypto", "z"):
        standard = ctypes.util.find_library(name)
        ours = loader_lookup(name)
        assert (Path(ours).name if ours else None) == standard, name
    assert loader_lookup("no-such-library-scout") is None
