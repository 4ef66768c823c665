"""The dependency range pyproject.toml claims is the one the tests see.

scripts/test_lowest.sh tests every runtime dependency at the floor that scripts/lowest_versions.py
reads from pyproject; the whole suite runs on the newest. That proves the range only for packages
pyproject names, so every package Scout's code imports must be named there, with a floor.
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


def test_the_readme_test_command_also_tests_the_lowest_versions() -> None:
    script = (ROOT / "scripts/test.sh").read_text(encoding="utf-8")
    assert "bash scripts/test_lowest.sh" in script
