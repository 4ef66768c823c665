"""Print the packages whose installed version differs from the one uv.lock pins.

scripts/test_newest.sh runs it in the newest-versions venv, so a test that breaks there comes
with the names of the packages that moved since the lock was made: the lock is then refreshed on
purpose (`uv lock --upgrade-package NAME`) once Scout works with them, never by surprise on a
user's machine. Packages the lock does not list (pip, uv) are not compared.

    .venv-newest/bin/python scripts/lock_drift.py    # `name locked -> installed`, one a line
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

LOCK = Path(__file__).resolve().parents[1] / "uv.lock"


def canonical(name: str) -> str:
    """A distribution name as PEP 503 compares it (case, `_`, `.` and `-` alike)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_versions(lock: Path = LOCK) -> dict[str, str]:
    """Each package uv.lock pins, by canonical name (the project itself has no registry version)."""
    packages = tomllib.loads(lock.read_text(encoding="utf-8")).get("package", [])
    return {canonical(p["name"]): p["version"] for p in packages if "version" in p}


def installed_versions() -> dict[str, str]:
    """Each distribution installed for this interpreter, by canonical name."""
    return {
        canonical(dist.metadata["Name"]): dist.version
        for dist in importlib.metadata.distributions()
        if dist.metadata["Name"]
    }


def moved(locked: dict[str, str], installed: dict[str, str]) -> list[tuple[str, str, str]]:
    """(name, locked, installed) for every locked package installed at another version."""
    return sorted(
        (name, version, installed[name])
        for name, version in locked.items()
        if name in installed and installed[name] != version
    )


def main() -> int:
    for name, locked, now in moved(locked_versions(), installed_versions()):
        print(f"{name} {locked} -> {now}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
