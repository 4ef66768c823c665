"""`scout init`: write a commented inventory and settings file to start from."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

TEMPLATES = files("agent.faces") / "templates"  # package data, found wherever pip put it


def write_starter_files(folder: Path, *, force: bool = False) -> list[str]:
    """Copy the templates into `folder`; never overwrite without `force`. Returns what happened."""
    folder.mkdir(parents=True, exist_ok=True)
    report = []
    for name in ("inventory.yaml", "settings.yaml"):
        target = folder / name
        if target.exists() and not force:
            report.append(f"kept {target} (exists; --force replaces it)")
            continue
        target.write_text((TEMPLATES / name).read_text(encoding="utf-8"), encoding="utf-8")
        report.append(f"wrote {target}")
    return report
