"""scripts/gate_classes.py names only tests that exist: the class list the closing note
pastes cannot cite a test that was renamed or removed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts/gate_classes.py"


@pytest.mark.slow
def test_every_class_names_tests_pytest_collects() -> None:
    run = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "MISSING" not in run.stdout
    assert "nmcli verbs abbreviated" in run.stdout and "ip and bridge objects" in run.stdout
