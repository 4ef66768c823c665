"""`pip list --format json` and `python3 --version`: what a venv or container already has."""

import json
import re

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError

_PYTHON_VERSION = re.compile(r"^Python (?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<micro>\d+))?\S*$")


class PipPackage(BaseModel):
    name: str
    version: str
    editable_location: str | None = None


def parse_pip_list_json(text: str) -> list[PipPackage]:
    """Read `pip list --format json`; pip notices printed around the JSON line are skipped."""
    json_line = next(
        (line.strip() for line in text.splitlines() if line.strip().startswith("[")), None
    )
    try:
        data = json.loads(json_line) if json_line is not None else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, list) or not all(
        isinstance(item, dict) and "name" in item and "version" in item for item in data
    ):
        raise ParseError("`pip list --format json` output (a JSON array of name/version)", text)
    return [
        PipPackage(
            name=item["name"],
            version=item["version"],
            editable_location=item.get("editable_project_location"),
        )
        for item in data
    ]


class PythonVersion(BaseModel):
    version: str
    major: int
    minor: int
    micro: int | None = None


def parse_python_version(text: str) -> PythonVersion:
    """Read `python3 --version` ('Python 3.12.3')."""
    match = _PYTHON_VERSION.match(text.strip())
    if match is None:
        raise ParseError("`python3 --version` output ('Python 3.X.Y')", text)
    micro = match["micro"]
    return PythonVersion(
        version=text.strip().removeprefix("Python "),
        major=int(match["major"]),
        minor=int(match["minor"]),
        micro=int(micro) if micro is not None else None,
    )
