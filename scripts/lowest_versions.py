"""Print pip constraints that pin every runtime dependency to the lowest version pyproject allows.

scripts/test_lowest.sh installs Scout with them into a second venv and runs the tests that touch
what the code relies on in its dependencies (stream errors, SSH, validation errors, retries,
rendering), so the range in pyproject.toml claims only what a test has seen. A dependency without
a lower bound is an error: its lowest version would be whatever pip finds first.

    python scripts/lowest_versions.py            # the constraints, one `name==version` a line
    python scripts/lowest_versions.py --names    # only the names (to read the versions back)
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_FLOOR = re.compile(r">=\s*([0-9][0-9A-Za-z.]*)")


def floors(pyproject: Path = PYPROJECT) -> dict[str, str]:
    """Each runtime dependency's name and its lowest allowed version, in pyproject's order."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    found: dict[str, str] = {}
    for requirement in project["dependencies"]:
        name = _NAME.match(requirement)
        floor = _FLOOR.search(requirement)
        if name is None or floor is None:
            raise SystemExit(f"{pyproject.name}: {requirement!r} has no lower bound (name>=X)")
        found[name.group(1)] = floor.group(1)
    return found


def main(argv: list[str]) -> int:
    pinned = floors()
    for name, version in pinned.items():
        print(name if argv[1:] == ["--names"] else f"{name}=={version}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
