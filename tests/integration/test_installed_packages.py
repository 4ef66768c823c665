"""The probe's package section: the interpreter's own metadata gives what `pip list` gives, with no
network and no file written; the simulator answers it as a real interpreter would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sim.hostdir import materialize, sandbox_env
from sim.scenario import load_scenario
from tools.recon.installed_packages import INSTALLED_PACKAGES_SCRIPT
from tools.recon.parsers import parse_pip_list_json
from tools.recon.sections import SECTIONS


def run(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    env.pop("PIP_DISABLE_PIP_VERSION_CHECK", None)
    return subprocess.run(
        args, capture_output=True, text=True, timeout=120, env=env, cwd=home, check=True
    )


def test_metadata_gives_what_pip_list_gives_and_writes_nothing(tmp_path: Path) -> None:
    """This interpreter's real environment: Scout itself installed editable, its dependencies."""
    home = tmp_path / "home"
    home.mkdir()
    read = run(sys.executable, "-B", "-c", INSTALLED_PACKAGES_SCRIPT, home=home)
    assert list(home.iterdir()) == []  # no ~/.cache/pip/selfcheck, nothing
    pip = run(sys.executable, "-m", "pip", "list", "--format", "json", "--no-index", home=tmp_path)
    assert parse_pip_list_json(read.stdout) == parse_pip_list_json(pip.stdout)
    editable = [p for p in parse_pip_list_json(read.stdout) if p.editable_location]
    assert [p.name for p in editable] == ["scout-agent"]
    assert json.loads(read.stdout) == json.loads(pip.stdout.strip().splitlines()[0])


def installed(site: Path, packages: dict[str, str]) -> None:
    """Wheel-installed distributions as a real site-packages holds them (their METADATA)."""
    for name, version in packages.items():
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def test_the_simulator_answers_the_probe_as_a_real_interpreter(tmp_path: Path) -> None:
    scenario = load_scenario("seed-pair")
    host = scenario.hosts["spark-a"]
    host_dir = materialize(host, scenario.user, tmp_path / "spark-a")
    command = dict(SECTIONS)["pip"]
    simulated = subprocess.run(
        [str(host_dir / "sandbox" / "launch"), command],
        env=sandbox_env(host_dir),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    site = tmp_path / "site-packages"
    installed(site, host.pip_packages)
    real = subprocess.run(  # -S: only the site above, as the simulated host has only those
        [sys.executable, "-S", "-B", "-c", INSTALLED_PACKAGES_SCRIPT],
        env={"PYTHONPATH": str(site), "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert host.pip_packages  # the scenario gives the host packages to list
    assert simulated.stdout == real.stdout
    assert simulated.stderr == ""
