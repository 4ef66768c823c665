"""Sessions and files as the user meets them: a bad `/save` path keeps the session, `scout init`
elsewhere names the inventory it wrote, doctor names the settings it read, and what Scout writes
(transcripts, logs, settings) is readable by its user alone."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console

from agent.faces.chat import COMMANDS, run_slash
from agent.standin.server import MessagesAPIServer

pytestmark = pytest.mark.slow

SCOUT = str(Path(sys.executable).with_name("scout"))


def scout(*argv: str, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "SCOUT_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "250"}
    environment.pop("SCOUT_SETTINGS", None)
    environment |= {"ANTHROPIC_API_KEY": "sk-ant-test-not-used", **env}
    return subprocess.run(
        [SCOUT, *argv], capture_output=True, text=True, timeout=120, env=environment
    )


async def test_save_to_a_bad_path_says_so_and_the_session_goes_on(tmp_path: Path) -> None:
    transcript = tmp_path / "scout-1.jsonl"
    transcript.write_text('{"v": 1}\n')
    out = io.StringIO()
    console = Console(file=out, width=200)
    runtime = SimpleNamespace(transcript_path=transcript)
    folder = tmp_path / "kept"
    folder.mkdir()

    await run_slash("/save /nonexistent-dir/x.jsonl", runtime, console, COMMANDS)  # type: ignore[arg-type]
    await run_slash(f"/save {folder}", runtime, console, COMMANDS)  # type: ignore[arg-type]

    assert out.getvalue().splitlines() == [
        "not saved: cannot use /nonexistent-dir/x.jsonl: no such file or directory; check the path",
        f"saved the transcript to {folder / 'scout-1.jsonl'}",
    ]
    assert (folder / "scout-1.jsonl").read_text() == '{"v": 1}\n'


def test_init_elsewhere_is_what_recon_and_doctor_then_read(
    tmp_path: Path, closed_port: int
) -> None:
    home, default_home = tmp_path / "ops", tmp_path / "default-home"
    made = scout("init", "--dir", str(home), home=default_home)
    assert made.returncode == 0, made.stderr
    assert f"export SCOUT_HOME={home}" in made.stdout
    # the user edits the inventory just written: one host, on a port nothing listens on
    (home / "inventory.yaml").write_text(
        f"hosts:\n  edited: {{address: 127.0.0.1, port: {closed_port}}}\n"
    )

    recon = scout("recon", home=home)
    doctor = scout("doctor", home=home)

    assert "scout recon: edited unreachable" in recon.stderr
    assert f"ok loaded {home / 'settings.yaml'}" in doctor.stdout
    assert f"ok 1 host from {home / 'inventory.yaml'}" in doctor.stdout


def test_what_scout_writes_is_readable_by_its_user_alone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert scout("init", home=home).returncode == 0
    # the starter inventory's hosts are examples: the run below asks for no tool, so none is reached
    turn = {"turn": {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}}
    with MessagesAPIServer([turn]) as server:
        run = scout("run", "--goal", "say done", home=home, ANTHROPIC_BASE_URL=server.url)
    assert run.returncode == 0, run.stderr

    modes = {
        str(path.relative_to(home)): stat.S_IMODE(path.stat().st_mode) for path in home.rglob("*")
    }
    assert {name for name in modes if name.startswith("transcripts/")}, modes
    assert {"logs/scout.log", "inventory.yaml", "settings.yaml"} <= set(modes)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert {
        name: oct(mode)
        for name, mode in modes.items()
        if mode != (0o700 if (home / name).is_dir() else 0o600)
    } == {}
