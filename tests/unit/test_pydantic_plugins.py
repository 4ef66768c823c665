"""A pydantic plugin installed beside Scout never runs inside it (agent/faces/pydantic_plugins.py).

The plugin here is a real distribution on sys.path, declared as pydantic finds plugins (an
entry point in the `pydantic` group); it notes in a file each model it was handed. Plain
Python with pydantic loads it, so the check on Scout can fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SPY = """\
import json
import os


class Spy:
    def new_schema_validator(self, schema, schema_type, schema_type_path, schema_kind, config,
                             plugin_settings):
        with open(os.environ["SPY_NOTES"], "a") as notes:
            notes.write(f"{schema_type_path.name}\\n")
        return None, None, None


plugin = Spy()
"""


@pytest.fixture
def spy_site(tmp_path: Path) -> Path:
    """A folder holding the spy plugin's module and its distribution's metadata."""
    site = tmp_path / "site"
    info = site / "spy_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "spy_plugin.py").write_text(SPY)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: spy-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nspy = spy_plugin:plugin\n")
    return site


def _run(code: str, site: Path, notes: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SPY_NOTES": str(notes), "SCOUT_HOME": str(notes.parent / "home")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), *sys.path])
    env.pop("PYDANTIC_DISABLE_PLUGINS", None)  # as a user's shell has it
    env.pop("SCOUT_SETTINGS", None)
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_plain_pydantic_hands_its_models_to_the_plugin(spy_site: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    code = "import pydantic\nclass Probe(pydantic.BaseModel):\n    x: int\n"
    assert _run(code, spy_site, notes).returncode == 0
    assert notes.read_text().splitlines() == ["Probe"]


@pytest.mark.slow
def test_scout_builds_its_models_without_the_plugin(spy_site: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    # `policy check` loads the settings (a pydantic model) and validates the call
    code = "import sys\nfrom agent.faces.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    call = '{"tool": "ssh_exec", "input": {"host": "a", "command": "ls"}}'
    done = _run(code, spy_site, notes, "policy", "check", "--call", call)
    assert (done.returncode, done.stdout) == (0, "read_only allow — 'ls' only reads or prints\n")
    assert not notes.exists(), notes.read_text()


# In a fresh interpreter, as a Scout command starts: the switch, then a model built.
BUILD_AFTER_THE_SWITCH = """\
import json, sys
from agent.faces.pydantic_plugins import PLUGIN_LOADER, keep_pydantic_plugins_out
keep_pydantic_plugins_out()
from agent.runtime.settings import Settings
Settings()
loader = sys.modules[PLUGIN_LOADER]
print(json.dumps({
    "metadata_read": "importlib.metadata" in sys.modules,
    "plugins": list(loader.get_plugins()),
    "group": loader.PYDANTIC_ENTRY_POINT_GROUP,
}))
"""


def test_scout_builds_a_model_without_reading_distributions_metadata(tmp_path: Path) -> None:
    env = {**os.environ, "SCOUT_HOME": str(tmp_path)}
    env.pop("SCOUT_SETTINGS", None)
    done = subprocess.run(
        [sys.executable, "-c", BUILD_AFTER_THE_SWITCH],
        capture_output=True, text=True, timeout=120, env=env, check=True,
    )  # fmt: skip
    found = json.loads(done.stdout)
    assert found["metadata_read"] is False  # pydantic's own loader imports it as it loads
    assert found["plugins"] == []
    # any other name comes from pydantic's own loader, loaded when asked for
    assert found["group"] == "pydantic"
