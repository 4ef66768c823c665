"""The dependency range pyproject.toml claims is the one the tests see, and the lock sits inside it.

scripts/test.sh runs the whole suite on the versions uv.lock pins (what the README installs), then
scripts/test_lowest.sh tests every runtime dependency at the floor that scripts/lowest_versions.py
reads from pyproject, and scripts/test_newest.sh at the newest pip resolves. That proves the range
only for packages pyproject names, so every package Scout's code imports must be named there, with
a floor, and the lock must pin each of them inside its range.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _lowest_versions():
    spec = importlib.util.spec_from_file_location(
        "lowest_versions", ROOT / "scripts/lowest_versions.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _imported_top_names() -> set[str]:
    names: set[str] = set()
    for package in ("agent", "tools", "sim"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"agent", "tools", "sim", "__future__"}


def _optional_floors() -> dict[str, str]:
    """The product's optional extras (not `test`): a feature that needs more, such as the chaos
    planner's hypothesis, names it there with a floor, and the code says so in one line when it
    is missing."""
    lowest = _lowest_versions()
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found: dict[str, str] = {}
    for extra, requirements in extras.get("optional-dependencies", {}).items():
        for requirement in requirements if extra != "test" else ():
            name, floor = lowest._NAME.match(requirement), lowest._FLOOR.search(requirement)
            assert name and floor, f"[{extra}] {requirement!r} has no lower bound (name>=X)"
            found[name.group(1)] = floor.group(1)
    return found


@pytest.mark.slow
def test_every_package_the_code_imports_is_a_dependency_with_a_tested_floor() -> None:
    declared = {_canonical(name) for name in [*_lowest_versions().floors(), *_optional_floors()]}
    owners = importlib.metadata.packages_distributions()
    undeclared = {
        name: owners.get(name, [name])
        for name in _imported_top_names()
        if not any(_canonical(dist) in declared for dist in owners.get(name, [name]))
    }
    assert undeclared == {}


def test_a_dependency_without_a_floor_is_refused(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\ndependencies = ["anthropic>=2.15,<3", "rich<16"]\n')
    with pytest.raises(SystemExit, match="'rich<16' has no lower bound"):
        _lowest_versions().floors(pyproject)


def test_the_readme_test_command_tests_the_lock_then_the_lowest_then_the_newest() -> None:
    script = (ROOT / "scripts/test.sh").read_text(encoding="utf-8")
    stages = [
        "bash scripts/install.sh test mcp",
        "bash scripts/test_lowest.sh",
        "bash scripts/test_newest.sh",
    ]
    assert all(stage in script for stage in stages)
    assert sorted(stages, key=script.index) == stages


def _lock_drift():
    spec = importlib.util.spec_from_file_location("lock_drift", ROOT / "scripts/lock_drift.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_lock_pins_every_dependency_inside_its_range() -> None:
    from packaging.requirements import Requirement

    locked = _lock_drift().locked_versions()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})
    requirements = [*project["dependencies"], *(r for group in extras.values() for r in group)]
    outside = {}
    for requirement in map(Requirement, requirements):
        version = locked.get(_canonical(requirement.name))
        if version is None or not requirement.specifier.contains(version, prereleases=True):
            outside[requirement.name] = (str(requirement.specifier), version)
    assert outside == {}


def test_lock_drift_names_the_packages_that_moved() -> None:
    drift = _lock_drift()
    locked = {"cryptography": "46.0.3", "rich": "15.0.0", "scout-agent": "0.1.0"}
    installed = {"cryptography": "51.0.1", "rich": "15.0.0", "pip": "26.0"}
    assert drift.moved(locked, installed) == [("cryptography", "46.0.3", "51.0.1")]
    assert drift.canonical("Prompt_Toolkit") == "prompt-toolkit"
