"""The probe's section groups run at the same time (a probe as long as its slowest group, not
the sum), and each group's output still arrives whole, with every section once; the docker reads
that need the daemon run only where `docker version` reached it."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tools.recon.probe import _all_at_once, build_probe_script, split_sections
from tools.recon.probe_parse import facts_from_sections
from tools.recon.sections import NEEDS_DAEMON, SECTION_GROUPS, SECTIONS

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
UNREACHABLE = (
    "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
    "Is the docker daemon running?"
)
# A docker CLI that logs each call and answers as the real one does with its daemon up or down:
# `version` and `info` print the client's part, then the server's or the daemon's error (exit 1);
# the daemon's other reads fail alike where it is down.
FAKE_DOCKER = f"""#!/bin/sh
echo "$1" >> "$DOCKER_CALLS"
if [ "$1" = version ] || [ "$1" = info ]; then
  printf 'Client:\\n Version:           28.2.2\\n'
fi
if [ "$DAEMON" = down ]; then
  if [ "$1" = info ]; then printf '\\nServer:\\n'; fi
  echo "{UNREACHABLE}" >&2
  exit 1
fi
if [ "$1" = version ]; then
  printf '\\nServer: Docker Engine - Community\\n Engine:\\n  Version:          28.2.2\\n'
fi
if [ "$1" = info ]; then
  printf '\\nServer:\\n Server Version: 28.2.2\\n Runtimes: io.containerd.runc.v2 nvidia runc\\n'
fi
"""


def _fake_docker(tmp_path: Path, daemon: str) -> dict[str, str]:
    """An environment with FAKE_DOCKER first on PATH, its daemon up or down."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    docker = bin_dir / "docker"
    docker.write_text(FAKE_DOCKER)
    docker.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "DAEMON": daemon,
            "DOCKER_CALLS": str(tmp_path / f"calls-{daemon}")}  # fmt: skip


def _run(script: str, env: dict[str, str]) -> str:
    return subprocess.run(
        ["sh", "-c", script], capture_output=True, text=True, timeout=60, env=env
    ).stdout


def _probe_with_docker(tmp_path: Path, daemon: str) -> tuple[dict, list[str]]:
    """The outside part run here with FAKE_DOCKER: its sections, and docker's calls."""
    env = _fake_docker(tmp_path, daemon)
    sections = split_sections(_run(build_probe_script("outside"), env))
    return sections, Path(env["DOCKER_CALLS"]).read_text().split()


def _waits_for(flag: Path, name: str) -> str:
    """A unit that waits (a bounded while) for `flag`, which only a unit beside it creates."""
    return (
        f'i=0; while [ ! -e "{flag}" ] && [ "$i" -lt 200 ]; do sleep 0.05; i=$((i+1)); done; '
        f'if [ -e "{flag}" ]; then echo "{name} saw its neighbour"; else echo "{name} alone"; fi'
    )


def test_units_run_at_the_same_time_and_print_whole(tmp_path: Path) -> None:
    """Run one after another, the first unit would wait out its bound alone."""
    first, last = tmp_path / "first", tmp_path / "last"
    units = [
        _waits_for(last, "first") + f'; touch "{first}"; echo first done',
        f'echo middle; touch "{last}"; echo middle done',
        _waits_for(first, "last"),
    ]
    shown = subprocess.run(
        ["sh", "-c", _all_at_once(units)], capture_output=True, text=True, timeout=60
    ).stdout.splitlines()
    assert shown == [
        "last saw its neighbour",
        "middle",
        "middle done",
        "first saw its neighbour",
        "first done",
    ]


def test_the_probe_runs_its_groups_at_once_and_every_section_once() -> None:
    script = build_probe_script()
    # one unit per group, one for the sections no group names, one for ethtool and the wall's
    assert script.count("\ncat; }") == len(SECTION_GROUPS) + 1
    grouped = set().union(*SECTION_GROUPS)
    assert grouped <= {name for name, _ in SECTIONS}
    shown = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=120)
    sections = split_sections(shown.stdout)
    ran = {name for name, _ in SECTIONS} | {"wall"}
    if sections["docker-version"].exit_status != 0:  # no docker daemon here
        ran -= NEEDS_DAEMON
    assert ran <= sections.keys()
    assert all(section.exit_status is not None for section in sections.values())


@pytest.mark.parametrize("daemon", ["up", "down"])
def test_the_daemons_reads_run_only_where_docker_version_reached_it(
    tmp_path: Path, daemon: str
) -> None:
    sections, calls = _probe_with_docker(tmp_path, daemon)
    if daemon == "up":
        assert sections.keys() >= NEEDS_DAEMON
        assert sorted(calls) == ["images", "info", "ps", "ps", "stats", "version"]
        assert "nvidia" in sections["docker-info"].output
    else:
        assert not NEEDS_DAEMON & sections.keys()
        assert sorted(calls) == ["stats", "version"]  # stats starts at once, not after version
        assert sections["docker-version"].exit_status == 1


def test_a_host_without_the_daemon_gets_the_same_docker_facts(tmp_path: Path) -> None:
    """The reads the probe skips, run as the probe ran them before (each printing the daemon's
    error), change no fact."""
    sections, _ = _probe_with_docker(tmp_path, "down")
    env = _fake_docker(tmp_path, "down")
    skipped = "".join(
        _run(f'echo "@@scout:section {name}@@"; {{ {command} ; }} 2>&1; '
             f'echo "@@scout:status {name} $?@@"', env)
        for name, command in SECTIONS if name in NEEDS_DAEMON
    )  # fmt: skip
    everything = split_sections(skipped) | sections
    assert everything.keys() >= NEEDS_DAEMON
    probed = facts_from_sections("h", sections, NOW).docker
    assert probed == facts_from_sections("h", everything, NOW).docker
    assert probed.installed and not probed.usable
    assert probed.problem and probed.problem.startswith(UNREACHABLE)
