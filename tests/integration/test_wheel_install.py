"""A normal install, as a newcomer gets it: build the wheel, install it (not editable) in a fresh
venv, and run `scout demo` from a folder outside the checkout with a fresh HOME.

The dependencies come from a wheelhouse kept between runs in the temp folder; it is filled from
the package index only when a distribution is missing, so later runs install offline.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = Path(tempfile.gettempdir()) / "scout-test-wheelhouse"
BUILD_NEEDS = ["setuptools>=77", "pip>=23.3"]  # pip before 23.3 warns about lxml[html_clean]
ENVIRONMENT_NOISE = "is ignored: it is neither a file nor a directory"  # this machine's pip.conf


def run(*argv: str | Path, timeout: float = 600, **kwargs: object) -> subprocess.CompletedProcess:
    return subprocess.run(  # type: ignore[call-overload]
        [str(part) for part in argv], capture_output=True, text=True, timeout=timeout, **kwargs
    )


def offline_pip(python: Path, *args: str | Path) -> subprocess.CompletedProcess:
    return run(python, "-m", "pip", *args, "--no-index", "--find-links", WHEELHOUSE)


# prompts/ and transcripts/ sit at the checkout's root and install as agent.prompts and
# agent.transcripts: what each install finds, asked from a folder outside the checkout
FIND = (
    "from importlib.resources import files; "
    "print(files('agent.prompts').joinpath('system.md').is_file(), "
    "files('agent.transcripts').joinpath('fresh-pair-deploy.jsonl').is_file())"
)
PROMPTS_AND_TRANSCRIPTS = "True True"


def found_from(python: Path, folder: Path) -> str:
    done = run(python, "-c", FIND, cwd=folder, env={"PATH": "/usr/bin:/bin"})
    return done.stdout.strip() or done.stderr[-500:]


def ensure_build_needs() -> None:
    """The build's own needs in the wheelhouse, fetched from the index only when one is missing."""
    WHEELHOUSE.mkdir(exist_ok=True)
    if offline_pip(Path(sys.executable), "download", "-d", WHEELHOUSE, *BUILD_NEEDS).returncode:
        run(sys.executable, "-m", "pip", "download", "-d", WHEELHOUSE, *BUILD_NEEDS)


def copy_source(tmp_path: Path) -> Path:
    """A copy of the checkout, so that building leaves no build/ or egg-info in it."""
    source = tmp_path / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".venv*", ".git", "build", "*.egg-info", "__pycache__", ".*_cache", "tests"
        ),
    )
    return source


def build_wheel(tmp_path: Path) -> Path:
    """The project's wheel, built from a copy of the checkout."""
    source = copy_source(tmp_path)
    done = offline_pip(Path(sys.executable), "wheel", "--no-deps", "-w", tmp_path / "dist", source)
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = (tmp_path / "dist").glob("scout_agent-*.whl")
    return wheel


def fill_wheelhouse(wheel: Path) -> None:
    """Download what the wheel and the build need into the wheelhouse (the only online step).

    Scout's own wheel never stays there: pip reuses a file of the same name it finds in the
    folder, so an old build would answer with its old dependencies.
    """
    for stale in WHEELHOUSE.glob("scout_agent-*.whl"):
        stale.unlink()
    done = run(sys.executable, "-m", "pip", "download", "-d", WHEELHOUSE, *BUILD_NEEDS, wheel)
    assert done.returncode == 0, done.stdout + done.stderr
    for built in WHEELHOUSE.glob("scout_agent-*.whl"):
        built.unlink()


@pytest.mark.timeout(1200)
def test_a_built_wheel_installs_quietly_and_runs_the_demo_anywhere(tmp_path: Path) -> None:
    ensure_build_needs()
    wheel = build_wheel(tmp_path)
    venv = tmp_path / "fresh"
    assert run(sys.executable, "-m", "venv", venv).returncode == 0
    python = venv / "bin" / "python"
    assert offline_pip(python, "install", "-q", "-U", *BUILD_NEEDS[1:]).returncode == 0
    installed = offline_pip(python, "install", wheel)
    if installed.returncode != 0:  # a dependency the wheelhouse does not hold yet
        fill_wheelhouse(wheel)
        installed = offline_pip(python, "install", wheel)
    output = installed.stdout + installed.stderr
    assert installed.returncode == 0, output
    warnings = [line for line in output.splitlines() if line.startswith("WARNING")]
    assert [line for line in warnings if ENVIRONMENT_NOISE not in line] == []

    elsewhere, home = tmp_path / "elsewhere", tmp_path / "home"
    elsewhere.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "NO_COLOR": "1", "COLUMNS": "100"}
    demo = run(venv / "bin" / "scout", "demo", "--fast", cwd=elsewhere, env=env)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    summary = demo.stdout[demo.stdout.index("summary") :]
    assert "single stream" in summary and "tok/s" in summary
    assert str(home / ".scout" / "transcripts") in summary
    replay = run(venv / "bin" / "scout", "replay", "sample-batch", cwd=elsewhere, env=env)
    assert replay.returncode == 0 and "session ended: done" in replay.stdout, replay.stderr
    assert found_from(python, elsewhere) == PROMPTS_AND_TRANSCRIPTS
    plugin = run(venv / "bin" / "scout", "mcp", "--plugin", cwd=elsewhere, env=env)
    folder = Path(plugin.stdout.strip())  # the Claude Code plugin ships in the wheel
    for part in (".claude-plugin/plugin.json", ".mcp.json", "skills/scout/SKILL.md"):
        assert (folder / part).is_file(), part
    assert (folder.parent / "discovery.json").is_file()  # the SDK's discover answer, written down
    init = run(venv / "bin" / "scout", "init", cwd=elsewhere, env=env)
    assert init.returncode == 0 and (home / ".scout" / "inventory.yaml").is_file(), init.stderr


def test_the_readme_install_is_the_lock_quietly(tmp_path: Path) -> None:
    """README command 1's install (`bash scripts/install.sh`) in a fresh copy of the checkout:
    nothing printed between the user and the demo, and every package at the version uv.lock pins,
    not the newest of the day."""
    source = copy_source(tmp_path)
    installed = run("bash", source / "scripts" / "install.sh", cwd=source)
    output = installed.stdout + installed.stderr
    assert installed.returncode == 0, output
    assert [line for line in output.splitlines() if ENVIRONMENT_NOISE not in line] == []
    python = source / ".venv" / "bin" / "python"
    drift = run(python, source / "scripts" / "lock_drift.py")
    assert (drift.returncode, drift.stdout) == (0, ""), drift.stdout + drift.stderr
    scout = run(source / ".venv" / "bin" / "scout", "--help")
    assert scout.returncode == 0 and scout.stdout.startswith("usage: scout"), scout.stderr
    # the editable install finds the root's prompts/ and transcripts/ from anywhere
    assert found_from(python, tmp_path) == PROMPTS_AND_TRANSCRIPTS
