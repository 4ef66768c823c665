"""pyproject.toml lists every package by hand, because prompts/ and transcripts/ sit at the root
and install as agent.prompts and agent.transcripts (a package-dir mapping, which automatic
discovery does not see). A package left off the list would be missing from the wheel."""

from __future__ import annotations

import tomllib
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
