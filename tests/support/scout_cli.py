"""Running the installed `scout` command as a user does: its own process, SCOUT_HOME in a test
folder, no colour, a fixed width."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCOUT = str(Path(sys.executable).with_name("scout"))


def scout(*args: str, home: Path, columns: int = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SCOUT_HOME": str(home), "NO_COLOR": "1", "COLUMNS": str(columns)}
    return subprocess.run(
        [SCOUT, *args], capture_output=True, text=True, timeout=240, env=env, cwd=ROOT
    )
