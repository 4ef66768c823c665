"""Docker's JSON listings, one object per row: `docker ps`, `docker images` and `docker stats`.

Recon and docker_ctl both ask for `--format '{{json .}}'` and read the rows with these parsers.
"""

import json
import re
from typing import Any

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError
from tools.recon.parsers.units import parse_optional_float, parse_size_bytes


def json_rows(text: str, what: str) -> list[dict[str, Any]]:
    """One JSON object per line (`{{json .}}`), or a JSON array of objects (`--format json`)."""
    stripped = text.strip()
    try:
        if stripped.startswith("["):
            objects = json.loads(stripped)
        else:
            objects = [json.loads(line) for line in stripped.splitlines() if line.strip()]
    except json.JSONDecodeError:
        raise ParseError(f"{what} (one JSON object per line)", text) from None
    if not isinstance(objects, list) or not all(isinstance(obj, dict) for obj in objects):
        raise ParseError(f"{what} (JSON objects)", text)
    return objects


class DockerContainer(BaseModel):
    id: str | None = None
    image: str
    command: str | None = None
    created_at: str | None = None
    running_for: str | None = None
    ports: str | None = None
    state: str | None = None
    status: str | None = None
    names: list[str]
    labels: dict[str, str] = {}
    networks: list[str] = []
    mounts: list[str] = []


def parse_docker_ps_json(text: str) -> list[DockerContainer]:
    """Read `docker ps --format json` / `'{{json .}}'`: one object per line, or a JSON array."""
    objects = json_rows(text, "`docker ps --format json` output")
    if not all("Image" in obj for obj in objects):
        raise ParseError("`docker ps` JSON objects with an 'Image' key", text)
    return [_container_from_json(obj) for obj in objects]


def _split_list(value: Any) -> list[str]:
    return [part.strip() for part in str(value or "").split(",") if part.strip()]


def _container_from_json(obj: dict[str, Any]) -> DockerContainer:
    labels = {}
    for pair in _split_list(obj.get("Labels")):
        key, _, value = pair.partition("=")
        labels[key] = value
    return DockerContainer(
        id=obj.get("ID"),
        image=obj["Image"],
        command=obj.get("Command"),
        created_at=obj.get("CreatedAt"),
        running_for=obj.get("RunningFor"),
        ports=obj.get("Ports") or None,
        state=obj.get("State"),
        status=obj.get("Status"),
        names=_split_list(obj.get("Names")),
        labels=labels,
        networks=_split_list(obj.get("Networks")),
        mounts=_split_list(obj.get("Mounts")),
    )


_TABLE_COLUMNS = {
    "CONTAINER ID": "id",
    "IMAGE": "image",
    "COMMAND": "command",
    "CREATED": "running_for",
    "STATUS": "status",
    "PORTS": "ports",
    "NAMES": "names",
    "STATE": "state",
}


def parse_docker_ps_table(text: str) -> list[DockerContainer]:
    """Read the `docker ps` table (default or `--format table …`) by the header's column starts.

    A `…`-truncated COMMAND can push the rest of its row off the header's columns; each cell
    start is nudged to the nearest word start and the drift carries along the row.
    """
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if not lines or "IMAGE" not in lines[0] or "NAMES" not in lines[0]:
        raise ParseError("a `docker ps` table with IMAGE and NAMES columns", text)
    header = lines[0]
    starts = [match.start() for match in re.finditer(r"(?:(?<=\s\s)|^)\S", header)]
    ends = [*starts[1:], None]
    titles = [header[start:end].strip() for start, end in zip(starts, ends, strict=True)]
    containers = []
    for line in lines[1:]:
        bounds = [*_cell_starts(line, starts), None]
        cells = {
            _TABLE_COLUMNS.get(title, title): line[start:end].strip()
            for title, start, end in zip(titles, bounds[:-1], bounds[1:], strict=True)
        }
        names = cells.pop("names", "")
        containers.append(
            DockerContainer(
                names=_split_list(names),
                **{key: value or None for key, value in cells.items() if key in _FIELD_NAMES},
            )
        )
    return containers


_NUDGES = (0, -1, 1, -2, 2, -3, 3)


def _cell_starts(line: str, header_starts: list[int]) -> list[int]:
    starts, drift = [], 0
    for header_start in header_starts:
        for nudge in _NUDGES:
            start = max(header_start + drift + nudge, 0)
            if start == 0 or start >= len(line) or line[start - 1] == " ":
                drift += nudge
                break
        starts.append(min(max(header_start + drift, 0), len(line)))
    return starts


_FIELD_NAMES = set(DockerContainer.model_fields) - {"names"}


class DockerImage(BaseModel):
    repository: str
    tag: str
    id: str
    created_since: str | None = None
    size: str | None = None

    @property
    def reference(self) -> str:
        """`repository:tag`, or the short id for an untagged image."""
        if self.repository == "<none>":
            return self.id.removeprefix("sha256:")[:12]
        return f"{self.repository}:{self.tag}"


def parse_docker_images_json(text: str) -> list[DockerImage]:
    """Read `docker images --format '{{json .}}'`."""
    return [
        DockerImage(
            repository=obj.get("Repository", "<none>"),
            tag=obj.get("Tag", "<none>"),
            id=obj.get("ID", ""),
            created_since=obj.get("CreatedSince"),
            size=obj.get("Size"),
        )
        for obj in json_rows(text, "`docker images --format json` output")
    ]


class ContainerStats(BaseModel):
    """One `docker stats --no-stream` row: the memory a running container holds right now."""

    name: str
    id: str | None = None
    memory_used_bytes: int | None = None
    memory_limit_bytes: int | None = None
    memory_usage: str | None = None  # as docker prints it: '91.3GiB / 121.7GiB'
    memory_percent: float | None = None
    cpu_percent: float | None = None
    pids: str | None = None


def parse_docker_stats_json(text: str) -> list[ContainerStats]:
    """Read `docker stats --no-stream --format '{{json .}}'` (MemUsage '91.3GiB / 121.7GiB')."""
    rows = []
    for obj in json_rows(text, "`docker stats --format '{{json .}}'` lines"):
        if "Name" not in obj:
            raise ParseError("`docker stats` JSON objects with a 'Name' key", text)
        usage = obj.get("MemUsage")
        used, _, limit = str(usage or "").partition("/")
        rows.append(
            ContainerStats(
                name=obj["Name"],
                id=obj.get("ID") or obj.get("Container"),
                memory_used_bytes=_optional_size(used),
                memory_limit_bytes=_optional_size(limit),
                memory_usage=usage,
                memory_percent=parse_optional_float(str(obj.get("MemPerc", ""))),
                cpu_percent=parse_optional_float(str(obj.get("CPUPerc", ""))),
                pids=obj.get("PIDs"),
            )
        )
    return rows


def _optional_size(text: str) -> int | None:
    try:
        return parse_size_bytes(text)
    except ParseError:
        return None
