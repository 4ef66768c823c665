"""No library's warning reaches the screen: each face runs with a library that warns as it is
imported (and with whatever the installed versions warn, cryptography 51's DSA deprecation as
asyncssh loads among them); stderr holds only Scout's own lines and the warning is in the log."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sim.cluster import SimCluster

REPO = Path(__file__).parents[2]
NOTICE = "noisy_library 0.1 is deprecated"
# A library that warns as it loads, in its own words, located where `stacklevel` says.
NOISY_LIBRARY = """
import warnings

class NoisyDeprecation(UserWarning):
    pass

warnings.warn("{notice}", NoisyDeprecation, stacklevel={stacklevel})
"""
# 1: at the library's own line, as cryptography does when asyncssh touches its DSA names. 3: at
# the line of Scout that imported the library the harness below hooks (past the hook's frame;
# Python skips the import system's), where a library's usual `stacklevel=2` deprecation at its
# import points: a warning located in Scout's code that is still the library's.
STACKLEVELS = {"at its own line": 1, "at Scout's import": 3}
# Runs `scout ARGV…`; the first library the face imports brings noisy_library in with it.
WITH_NOISY_LIBRARY = """
import importlib.abc, importlib.util, sys

OWN = {"agent", "tools", "sim", "noisy_library"}


class ThenNoisy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or top in OWN or top.startswith("_"):
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:  # an optional import that finds nothing
            sys.meta_path.insert(0, self)
            return None
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            import noisy_library

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, ThenNoisy())
from agent.faces.cli import main
sys.exit(main(sys.argv[1:]))
"""


async def _face(argv: list[str], folder: Path, stacklevel: int) -> tuple[int, str, str, str]:
    """(exit status, stdout, stderr, the log file's text) of one face run with noisy_library."""
    noisy = NOISY_LIBRARY.format(notice=NOTICE, stacklevel=stacklevel)
    (folder / "noisy_library.py").write_text(noisy)
    home = folder / "home"
    env = {
        **os.environ,
        "SCOUT_HOME": str(home),
        "PYTHONPATH": os.pathsep.join([str(REPO), str(folder)]),
        "NO_COLOR": "1",
        "COLUMNS": "200",
    }
    env.pop("PYTHONWARNINGS", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        WITH_NOISY_LIBRARY,
        *argv,
        cwd=folder,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=240)
    log = home / "logs" / "scout.log"
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode(), log.read_text() if log.exists() else ""


def _library_lines(stderr: str) -> list[str]:
    """Lines of stderr that a library's warning printed (its location, or the warning's name)."""
    return [
        line
        for line in stderr.splitlines()
        if NOTICE in line or "Warning:" in line or "site-packages" in line
    ]


# argv, its exit status (doctor finds no API key here), and whether the face opens the log file
FACES = {
    "doctor": ("doctor --inventory {inv}", 1, True),
    "recon": ("recon --inventory {inv} --hosts spark-a", 0, True),
    "exec": ("exec --inventory {inv} --mode ci spark-a -- hostname", 0, True),
    "policy classify": ("policy classify ls", 0, False),
    "demo --fast": ("demo --fast", 0, True),
}


@pytest.mark.slow
@pytest.mark.parametrize("stacklevel", STACKLEVELS.values(), ids=STACKLEVELS.keys())
@pytest.mark.parametrize(("argv", "status", "logs"), FACES.values(), ids=FACES.keys())
async def test_a_library_warning_never_reaches_the_screen(
    argv: str, status: int, logs: bool, stacklevel: int, cluster: SimCluster, tmp_path: Path
) -> None:
    inventory = cluster.write_inventory(tmp_path / "inv" / "inventory.yaml")
    words = argv.replace("{inv}", str(inventory)).split()
    code, out, err, log = await _face(words, tmp_path, stacklevel)
    assert (code, _library_lines(err)) == (status, []), err[-3000:]
    assert out.strip() and NOTICE not in out
    if logs:  # a face that opens the log file writes the warning there, at its location
        (said,) = [line for line in log.splitlines() if NOTICE in line]
        assert "NoisyDeprecation" in said
        in_scout = any(f"{REPO / folder}{os.sep}" in said for folder in ("agent", "tools", "sim"))
        assert in_scout == (stacklevel == STACKLEVELS["at Scout's import"]), said


def test_scouts_own_warning_still_shows(tmp_path: Path) -> None:
    """Only a warning that Scout's code raises, located in Scout's code, is for the developer
    reading the screen: a library's, even one located at Scout's line (`stacklevel=2` at its
    import, or deprecating Scout's call), goes to the log; -W still decides what is shown."""
    library = tmp_path / "library.py"
    library.write_text(
        "import warnings\n"
        "def old():\n"
        "    warnings.warn(\"a library's, at Scout's call\", UserWarning, stacklevel=2)\n"
    )
    # code run as if it were in Scout's module (its file, its package's name)
    code = (
        "import sys, warnings\n"
        "from agent.faces import library_warnings\n"
        "library_warnings.route_library_warnings()\n"
        "in_scout = {'__name__': 'agent.faces.library_warnings'}\n"
        "source = 'import library, warnings\\n'\n"
        "source += 'warnings.warn(\"Scout\\'s own\", UserWarning)\\n'\n"
        "source += 'library.old()\\n'\n"
        "exec(compile(source, library_warnings.__file__, 'exec'), in_scout)\n"
        f'warnings.warn_explicit("a library\'s", UserWarning, {str(library)!r}, 1)\n'
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path)])}
    env.pop("PYTHONWARNINGS", None)
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stderr
    assert "UserWarning: Scout's own" in shown
    assert "a library's" not in shown
    raised = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, env=env
    )
    assert raised.returncode == 1 and "UserWarning: Scout's own" in raised.stderr
