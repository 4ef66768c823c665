"""pyproject.toml lists every package by hand, because prompts/ and transcripts/ sit at the root
and install as agent.prompts and agent.transcripts (a package-dir mapping, which automatic
discovery does not see). A package left off the list would be missing from the wheel."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _discovered() -> set[str]:
    """Every folder with an __init__.py under the code's tops, as a dotted package name."""
    return {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("agent", "tools", "sim")
        for init in (ROOT / top).rglob("__init__.py")
    }


def test_every_package_is_listed_and_every_listed_one_exists() -> None:
    mapped = {name for name in TOOL["package-dir"] if name}
    assert set(TOOL["packages"]) == _discovered() | mapped


def test_the_root_s_prompts_and_transcripts_are_the_mapped_packages() -> None:
    assert TOOL["package-dir"]["agent.prompts"] == "prompts"
    assert TOOL["package-dir"]["agent.transcripts"] == "transcripts"
    assert (ROOT / "prompts" / "system.md").is_file()
    assert list((ROOT / "transcripts").glob("*.jsonl"))


def _ships(inside: str, pattern: str) -> bool:
    """setuptools' package-data glob: `*` stays inside one folder of the path."""
    parts, wanted = inside.split("/"), pattern.split("/")
    return len(parts) == len(wanted) and all(map(fnmatch, parts, wanted))


def _data_patterns(package: str) -> list[str]:
    data = TOOL.get("package-data", {})
    return [*data.get("*", []), *data.get(package, [])]


def test_every_data_file_in_a_folder_without_init_ships_with_its_package() -> None:
    """A folder of data (recipes, templates, scripts) is no package of its own: listing the
    packages by hand, its files ship only where the nearest package's package-data names them."""
    packages = set(TOOL["packages"])
    missing = []
    for top in ("agent", "tools", "sim"):
        for path in (ROOT / top).rglob("*"):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".py":
                continue
            folder = path.parent
            if (folder / "__init__.py").exists():
                continue  # in a package: the "*" patterns or its own entry decide, as before
            owner = folder
            while ".".join(owner.relative_to(ROOT).parts) not in packages:
                owner = owner.parent
            inside = path.relative_to(owner).as_posix()
            package = ".".join(owner.relative_to(ROOT).parts)
            if not any(_ships(inside, pattern) for pattern in _data_patterns(package)):
                missing.append(f"{path.relative_to(ROOT)} (package {package})")
    assert missing == []
