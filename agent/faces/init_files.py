"""`scout init`: write a commented inventory and settings file to start from.

The settings name the inventory beside them (a relative path, read from the settings file's
folder); when Scout would not read these settings as things stand, the next step says how.
"""

from __future__ import annotations

import os
import sys
from importlib.resources import files
from pathlib import Path

from agent.faces.failures import describe_os_error, writable_folder
from agent.runtime.settings import scout_home, settings_path

TEMPLATES = files("agent.faces") / "templates"  # package data, found wherever pip put it


def init_main(folder_flag: str | None, *, force: bool) -> int:
    """`scout init [--dir X] [--force]`: write the files, say what happened and what comes next."""
    folder = Path(folder_flag).expanduser() if folder_flag else scout_home()
    problem = writable_folder(folder, "--dir" if folder_flag else "SCOUT_HOME")
    try:
        if problem is None:
            for line in write_starter_files(folder, force=force):
                print(line)
    except OSError as exc:
        problem = describe_os_error(exc)
    if problem is not None:
        print(f"scout init: {problem}", file=sys.stderr)
        return 1
    print(next_step(folder))
    return 0


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


def next_step(folder: Path) -> str:
    """What to do after `scout init`, including how to make Scout read the files written."""
    written = folder / "settings.yaml"
    if written.resolve() == settings_path().resolve():
        return "next: edit the inventory, export ANTHROPIC_API_KEY, then run `scout doctor`"
    variable = (
        f"SCOUT_SETTINGS={written}" if os.environ.get("SCOUT_SETTINGS") else f"SCOUT_HOME={folder}"
    )
    return (
        f"next: edit the inventory, export {variable} (Scout reads {settings_path()} now) and "
        "ANTHROPIC_API_KEY, then run `scout doctor`"
    )
