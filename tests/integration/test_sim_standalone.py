"""`python -m sim` as a newcomer runs it: the command it suggests works as printed."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_the_suggested_recon_command_runs_as_printed(tmp_path: Path) -> None:
    env = {**os.environ, "SCOUT_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    env["PATH"] = "/usr/bin:/bin"  # the venv is not activated: `scout` is not on PATH
    sim = subprocess.Popen(
        [sys.executable, "-m", "sim", "seed-pair", "--dir", str(tmp_path / "sim")],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert sim.stdout is not None
        banner = []
        while not banner or not banner[-1].startswith("Press Ctrl-C"):
            line = sim.stdout.readline()
            assert line, "the simulator stopped before it was up:\n" + "".join(banner)
            banner.append(line)
        (hint,) = [line.strip() for line in banner if line.strip().startswith("try: ")]
        command = shlex.split(hint.removeprefix("try: "))
        assert Path(command[0]).is_absolute() and Path(command[0]).name == "scout"
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        assert "spark-a" in done.stdout and "spark-b" in done.stdout
    finally:
        sim.send_signal(signal.SIGINT)
        sim.wait(timeout=30)
