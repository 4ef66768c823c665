"""`scout recon` loads what probing and printing need, not a session's machinery: the builder,
the rule engine, the gate, the shell classifier and the deployment planner stay unimported
(they cost recon a third of its start-up). Building a session does load them; that case is here
too, so the check can fail."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

UNUSED_BY_RECON = (
    "agent.runtime.builder",
    "agent.safety.rules",
    "agent.safety.gate",
    "agent.safety.shell.classifier",
    "agent.loop.session",
    "tools.plan_deployment",
)
# Says on stderr which of those modules this process imported.
REPORT = (
    "import sys\n"
    f"print('loaded:', sorted(set({UNUSED_BY_RECON!r}) & set(sys.modules)), file=sys.stderr)\n"
)
RECON = "import sys\nfrom agent.faces.cli import main\nmain(sys.argv[1:])\n" + REPORT


def _loaded(code: str, argv: list[str], home: Path) -> str:
    env = {**os.environ, "SCOUT_HOME": str(home)}
    env.pop("SCOUT_SETTINGS", None)
    done = subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("loaded:")]
    return line


@pytest.fixture
def closed_inventory(tmp_path: Path) -> Path:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    inventory = tmp_path / "closed.yaml"
    inventory.write_text(f"hosts:\n  a: {{address: 127.0.0.1, port: {port}}}\n")
    return inventory


def test_recon_loads_no_session_machinery(closed_inventory: Path, tmp_path: Path) -> None:
    argv = ["recon", "--inventory", str(closed_inventory)]
    assert _loaded(RECON, argv, tmp_path / "home") == "loaded: []"


def test_a_settings_file_without_rules_loads_no_rule_engine(
    closed_inventory: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.yaml").write_text("mode: ask\nrules: {allow: [], deny: []}\n")
    argv = ["recon", "--inventory", str(closed_inventory)]
    assert _loaded(RECON, argv, home) == "loaded: []"


def test_building_a_session_loads_it(tmp_path: Path) -> None:
    code = "import agent.runtime.builder\n" + REPORT
    assert _loaded(code, [], tmp_path / "home") == f"loaded: {sorted(UNUSED_BY_RECON)!r}"
