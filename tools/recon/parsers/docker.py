"""`docker version` and `docker info`, and what docker says when it cannot be used at all.

`docker_access_problem` reads the three ways docker fails before doing anything (not installed,
the socket refuses this user, no daemon); recon, docker_ctl and doctor all ask it.
"""

import json
import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError
from tools.recon.parsers.missing import COMMAND_NOT_FOUND_STATUS

DockerAccess = Literal["not_installed", "permission_denied", "daemon_unreachable"]
_NOT_FOUND = re.compile(r"docker: (?:command )?not found|docker: No such file or directory")
_DAEMON_ERROR = re.compile(
    r"^(?:ERROR:\s*)?(?:Got\s+)?(?P<message>(?:(?P<denied>permission denied while trying to "
    r"connect to the Docker (?:daemon|API))|Cannot connect to the Docker daemon|error during "
    r"connect).*)$",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True)
class DockerAccessProblem:
    kind: DockerAccess
    line: str  # what the shell or docker said, one line


def docker_access_problem(output: str, exit_status: int | None) -> DockerAccessProblem | None:
    """Why docker could not be used at all, from any docker command's output; None: it could."""
    if exit_status == COMMAND_NOT_FOUND_STATUS:
        said = next((line.strip() for line in output.splitlines() if _NOT_FOUND.search(line)), "")
        if said:
            return DockerAccessProblem("not_installed", said)
    match = _DAEMON_ERROR.search(output)
    if match is None:
        return None
    kind: DockerAccess = "permission_denied" if match["denied"] else "daemon_unreachable"
    return DockerAccessProblem(kind, match["message"].strip())


def _daemon_error(text: str) -> str | None:
    problem = docker_access_problem(text, None)
    return problem.line if problem else None


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
    components: dict[str, str] = {}
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
    runtimes: list[str] = []
    default_runtime: str | None = None
    cdi_spec_dirs: list[str] = []
    swarm: str | None = None
    server_error: str | None = None


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
