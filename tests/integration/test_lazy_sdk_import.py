"""Faces that never call a model start without the anthropic SDK (about a second of imports):
recon, doctor, policy, redact, init and replay, and replay --sim, which answers from a recording.
Only building a model client imports it; that case is here too, so the check can fail."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

# Says on stderr whether the SDK was ever imported in this process.
REPORT = 'import sys\nprint("SDK imported:", "anthropic" in sys.modules, file=sys.stderr)\n'
# Runs `scout ARGV…` in this process, then reports.
PROBE = "import sys\nfrom agent.faces.cli import main\nmain(sys.argv[1:])\n" + REPORT
BUILDS_A_CLIENT = (
    """
from agent.runtime.builder import model_client_for
from agent.runtime.settings import Settings
model_client_for(Settings(api_key="sk-ant-test"))
"""
    + REPORT
)
FACES = {
    "recon": "recon --inventory {d}/closed.yaml",
    "doctor": "doctor --inventory {d}/closed.yaml",
    "policy": "policy classify ls",
    "redact": "redact",
    "init": "init --dir {d}/starter",
    "replay": "replay sample-batch",
    "replay-sim": "replay sample-batch --sim seed-pair",
    "exec": "exec --inventory {d}/closed.yaml --mode ci a -- hostname",
}


def _imports_the_sdk(code: str, argv: list[str], home: Path) -> str:
    env = {**os.environ, "SCOUT_HOME": str(home), "ANTHROPIC_API_KEY": "sk-ant-test"}
    env.pop("SCOUT_SETTINGS", None)
    done = subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("SDK imported:")]
    return line


@pytest.mark.parametrize("argv", FACES.values(), ids=FACES.keys())
def test_a_face_that_calls_no_model_starts_without_the_sdk(
    argv: str, tmp_path: Path, closed_port: int
) -> None:
    inventory = f"hosts:\n  a: {{address: 127.0.0.1, port: {closed_port}}}\n"
    (tmp_path / "closed.yaml").write_text(inventory)
    words = argv.replace("{d}", str(tmp_path)).split()
    assert _imports_the_sdk(PROBE, words, tmp_path / "home") == "SDK imported: False"


def test_the_demo_imports_the_sdk_only_when_live_builds_a_client(tmp_path: Path) -> None:
    """The replayed demo runs what replay --sim runs; its own module must not bring the SDK in."""
    code = "import agent.faces.demo\n" + REPORT
    assert _imports_the_sdk(code, [], tmp_path / "home") == "SDK imported: False"


def test_building_a_model_client_imports_the_sdk(tmp_path: Path) -> None:
    assert _imports_the_sdk(BUILDS_A_CLIENT, [], tmp_path / "home") == "SDK imported: True"
