"""`docker inspect` of a container or an image, reduced to the facts an operator reads.

State, image, mounts, GPUs and network for a container; tags, platform and size for an image.
Secret-looking environment values are masked as they are read.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from tools.recon.parsers.env_secrets import MASK, is_secret_name
from tools.recon.parsers.errors import ParseError


class ContainerDetails(BaseModel):
    id: str
    name: str
    image: str
    status: str | None = None
    running: bool = False
    exit_code: int | None = None
    error: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    restart_policy: str | None = None
    network_mode: str | None = None
    ipc_mode: str | None = None
    gpus: list[str] = []
    mounts: list[str] = []
    ports: list[str] = []
    entrypoint: list[str] = []
    cmd: list[str] = []
    env: dict[str, str] = {}
    labels: dict[str, str] = {}


class ImageDetails(BaseModel):
    id: str
    tags: list[str] = []
    created: str | None = None
    architecture: str | None = None
    os: str | None = None
    size_bytes: int | None = None
    entrypoint: list[str] = []
    cmd: list[str] = []
    env: dict[str, str] = {}


def _inspect_object(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise ParseError("`docker inspect` output (a JSON array)", text) from None
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        raise ParseError("`docker inspect` output (a JSON array of one object)", text)
    return data[0]


def _env(pairs: list[str] | None) -> dict[str, str]:
    env = {}
    for pair in pairs or []:
        name, _, value = pair.partition("=")
        env[name] = MASK if is_secret_name(name) else value
    return env


def parse_container_inspect(text: str) -> ContainerDetails:
    """Read `docker inspect --type container X` into the facts that matter for operating it."""
    obj = _inspect_object(text)
    state, config, hostcfg = (
        obj.get("State") or {},
        obj.get("Config") or {},
        obj.get("HostConfig") or {},
    )
    restart = hostcfg.get("RestartPolicy") or {}
    gpus = [
        ",".join(request.get("DeviceIDs") or [f"count={request.get('Count')}"])
        for request in hostcfg.get("DeviceRequests") or []
    ]
    mounts = [
        f"{m.get('Source') or m.get('Name')}:{m.get('Destination')}"
        + ("" if m.get("RW", True) else ":ro")
        for m in obj.get("Mounts") or []
    ]
    ports = [
        f"{binding.get('HostIp') or ''}:{binding.get('HostPort')}->{port}".lstrip(":")
        for port, bindings in ((obj.get("NetworkSettings") or {}).get("Ports") or {}).items()
        for binding in bindings or []
    ]
    return ContainerDetails(
        id=obj.get("Id", ""),
        name=str(obj.get("Name", "")).lstrip("/"),
        image=config.get("Image") or obj.get("Image", ""),
        status=state.get("Status"),
        running=bool(state.get("Running")),
        exit_code=state.get("ExitCode"),
        error=state.get("Error") or None,
        started_at=state.get("StartedAt"),
        finished_at=state.get("FinishedAt"),
        restart_policy=restart.get("Name") or None,
        network_mode=hostcfg.get("NetworkMode"),
        ipc_mode=hostcfg.get("IpcMode"),
        gpus=gpus,
        mounts=mounts,
        ports=ports,
        entrypoint=config.get("Entrypoint") or [],
        cmd=config.get("Cmd") or [],
        env=_env(config.get("Env")),
        labels=config.get("Labels") or {},
    )


def parse_image_inspect(text: str) -> ImageDetails:
    """Read `docker inspect --type image X`."""
    obj = _inspect_object(text)
    config = obj.get("Config") or {}
    return ImageDetails(
        id=obj.get("Id", ""),
        tags=obj.get("RepoTags") or [],
        created=obj.get("Created"),
        architecture=obj.get("Architecture"),
        os=obj.get("Os"),
        size_bytes=obj.get("Size"),
        entrypoint=config.get("Entrypoint") or [],
        cmd=config.get("Cmd") or [],
        env=_env(config.get("Env")),
    )
