"""`docker version`, `docker info`, `docker ps --format json` and the `docker ps` table."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field, computed_field

from tools.recon.parsers.errors import ParseError
from tools.recon.parsers.units import parse_optional_float, parse_size_bytes

_DAEMON_ERROR = re.compile(
    r"^(?:ERROR:\s*)?(?P<message>(?:Cannot connect to the Docker daemon|permission denied while "
    r"trying to connect to the Docker (?:daemon|API)|error during connect).*)$",
    re.IGNORECASE | re.MULTILINE,
)


def _daemon_error(text: str) -> str | None:
    match = _DAEMON_ERROR.search(text)
    return match["message"].strip() if match else None


def _sections(text: str) -> dict[str, list[tuple[int, str, str]]]:
    """Lines under each top-level `Client:`/`Server:` header as (indent, key, value)."""
    sections: dict[str, list[tuple[int, str, str]]] = {}
    current: list[tuple[int, str, str]] | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        key, sep, value = line.strip().partition(":")
        if indent == 0 and sep and key in ("Client", "Server"):
            current = sections.setdefault(key, [])
        elif current is not None:
            current.append((indent, key.strip() if sep else line.strip(), value.strip()))
    return sections


class DockerVersion(BaseModel):
    client_version: str | None = None
    client_api_version: str | None = None
    os_arch: str | None = None
    server_version: str | None = None
    server_api_version: str | None = None
    components: dict[str, str] = Field(default_factory=dict)
    server_error: str | None = None


def parse_docker_version(text: str) -> DockerVersion:
    """Read `docker version` (text or `--format json`); a daemon error keeps the client part."""
    stripped = text.strip()
    if stripped.startswith("{"):
        return _docker_version_from_json(stripped, text)
    sections = _sections(text)
    if "Client" not in sections and "Server" not in sections:
        raise ParseError("`docker version` output with 'Client:' and 'Server:' sections", text)
    client = {key: value for indent, key, value in sections.get("Client", []) if indent == 1}
    result = DockerVersion(
        client_version=client.get("Version"),
        client_api_version=client.get("API version"),
        os_arch=client.get("OS/Arch"),
        server_error=_daemon_error(text),
    )
    component = None
    for indent, key, value in sections.get("Server", []):
        if not value and indent <= 1:
            component = key
        elif key == "Version" and component is not None:
            result.components[component] = value
        elif key == "API version" and component == "Engine":
            result.server_api_version = value.split()[0]
    result.server_version = result.components.get("Engine")
    return result


def _docker_version_from_json(stripped: str, text: str) -> DockerVersion:
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError:
        raise ParseError("`docker version --format json` output", text) from None
    client, server = data.get("Client") or {}, data.get("Server") or {}
    components = {
        item.get("Name", ""): item.get("Version", "") for item in server.get("Components") or []
    }
    return DockerVersion(
        client_version=client.get("Version"),
        client_api_version=client.get("ApiVersion"),
        os_arch=f"{client['Os']}/{client['Arch']}" if "Os" in client and "Arch" in client else None,
        server_version=server.get("Version"),
        server_api_version=server.get("ApiVersion"),
        components=components,
        server_error=None if server else _daemon_error(text),
    )


class DockerInfo(BaseModel):
    client_version: str | None = None
    server_version: str | None = None
    containers: int | None = None
    containers_running: int | None = None
    containers_paused: int | None = None
    containers_stopped: int | None = None
    images: int | None = None
    storage_driver: str | None = None
    cgroup_driver: str | None = None
    cgroup_version: str | None = None
    runtimes: list[str] = Field(default_factory=list)
    default_runtime: str | None = None
    cdi_spec_dirs: list[str] = Field(default_factory=list)
    swarm: str | None = None
    server_error: str | None = None

    @computed_field
    @property
    def has_nvidia_runtime(self) -> bool:
        return "nvidia" in self.runtimes


def parse_docker_info(text: str) -> DockerInfo:
    """Read `docker info` (also a `head` of it); without a daemon only the client part is set."""
    sections = _sections(text)
    if "Client" not in sections and "Server" not in sections:
        raise ParseError("`docker info` output with 'Client:' and 'Server:' sections", text)
    client = {key: value for indent, key, value in sections.get("Client", []) if indent == 1}
    server: dict[str, str] = {}
    cdi_dirs: list[str] = []
    list_key = None
    for _, key, value in sections.get("Server", []):
        if key == "CDI spec directories" and not value:
            list_key = key
        elif list_key is not None and not value and key.startswith("/"):
            cdi_dirs.append(key)
        else:
            list_key = None
            server.setdefault(key, value)

    def number(key: str) -> int | None:
        value = server.get(key, "")
        return int(value) if value.isdigit() else None

    return DockerInfo(
        client_version=client.get("Version"),
        server_version=server.get("Server Version"),
        containers=number("Containers"),
        containers_running=number("Running"),
        containers_paused=number("Paused"),
        containers_stopped=number("Stopped"),
        images=number("Images"),
        storage_driver=server.get("Storage Driver"),
        cgroup_driver=server.get("Cgroup Driver"),
        cgroup_version=server.get("Cgroup Version"),
        runtimes=server.get("Runtimes", "").split(),
        default_runtime=server.get("Default Runtime"),
        cdi_spec_dirs=cdi_dirs,
        swarm=server.get("Swarm"),
        server_error=_daemon_error(text),
    )


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
    labels: dict[str, str] = Field(default_factory=dict)
    networks: list[str] = Field(default_factory=list)
    mounts: list[str] = Field(default_factory=list)


def parse_docker_ps_json(text: str) -> list[DockerContainer]:
    """Read `docker ps --format json` / `'{{json .}}'`: one object per line, or a JSON array."""
    stripped = text.strip()
    if not stripped:
        return []
    try:
        if stripped.startswith("["):
            objects = json.loads(stripped)
        else:
            objects = [json.loads(line) for line in stripped.splitlines() if line.strip()]
    except json.JSONDecodeError:
        raise ParseError(
            "`docker ps --format json` output (one JSON object per line)", text
        ) from None
    if not all(isinstance(obj, dict) and "Image" in obj for obj in objects):
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


class ContainerStats(BaseModel):
    """One `docker stats --no-stream` row: the memory a running container holds right now."""

    name: str
    id: str | None = None
    memory_used_bytes: int | None = None
    memory_limit_bytes: int | None = None
    memory_percent: float | None = None
    cpu_percent: float | None = None


def parse_docker_stats_json(text: str) -> list[ContainerStats]:
    """Read `docker stats --no-stream --format '{{json .}}'` (MemUsage '91.3GiB / 121.7GiB')."""
    rows = []
    for line in (raw.strip() for raw in text.splitlines()):
        if not line:
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            raise ParseError("`docker stats --format '{{json .}}'` lines", text) from None
        if not isinstance(obj, dict) or "Name" not in obj:
            raise ParseError("`docker stats` JSON objects with a 'Name' key", text)
        used, _, limit = str(obj.get("MemUsage", "")).partition("/")
        rows.append(
            ContainerStats(
                name=obj["Name"],
                id=obj.get("ID") or obj.get("Container"),
                memory_used_bytes=_optional_size(used),
                memory_limit_bytes=_optional_size(limit),
                memory_percent=parse_optional_float(str(obj.get("MemPerc", ""))),
                cpu_percent=parse_optional_float(str(obj.get("CPUPerc", ""))),
            )
        )
    return rows


def _optional_size(text: str) -> int | None:
    try:
        return parse_size_bytes(text)
    except ParseError:
        return None
