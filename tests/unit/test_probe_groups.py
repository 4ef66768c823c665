"""The probe's section groups run at the same time (a probe as long as its slowest group, not
the sum), and each group's output still arrives whole, with every section once."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tools.recon.probe import _all_at_once, build_probe_script, split_sections
from tools.recon.sections import SECTION_GROUPS, SECTIONS


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
    assert {name for name, _ in SECTIONS} | {"wall"} <= sections.keys()
    assert all(section.exit_status is not None for section in sections.values())
