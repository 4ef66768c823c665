"""Docker failures a user meets, recognised in the CLI's output and explained with a fix.

`classify_failure` names the failure and what it is about (a container, an image); the tool then
fetches what the explanation needs (existing container names, local images) and calls
`explain_failure` for the sentence the model reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from tools.docker.params import DockerCtlInput
from tools.recon.parsers.docker import docker_access_problem


class FailureKind(Enum):
    PERMISSION = "permission denied on the docker socket"
    NOT_INSTALLED = "docker not installed"
    DAEMON_DOWN = "docker daemon not running"
    NO_CONTAINER = "no such container"
    NAME_IN_USE = "container name in use"
    IMAGE_MISSING = "image not available"
    NO_GPU_RUNTIME = "no GPU runtime"


@dataclass(frozen=True)
class DockerFailure:
    kind: FailureKind
    subject: str | None
    detail: str


_ACCESS_FAILURES = {
    "permission_denied": FailureKind.PERMISSION,
    "not_installed": FailureKind.NOT_INSTALLED,
    "daemon_unreachable": FailureKind.DAEMON_DOWN,
}
_NO_CONTAINER = re.compile(r"No such container: ?(?P<subject>\S+)")
_NAME_IN_USE = re.compile(
    r'container name "/?(?P<subject>[^"]+)" is already in use by container "(?P<id>[0-9a-f]+)"'
)
_NO_LOCAL_IMAGE = re.compile(r"Unable to find image '(?P<subject>[^']+)' locally")
_NO_SUCH_IMAGE = re.compile(r"No such image: ?(?P<subject>[^\s]+?)\.?$", re.MULTILINE)
_NO_GPU = re.compile(r'could not select device driver "[^"]*" with capabilities: \[\[gpu\]\]')
_DAEMON_LINE = re.compile(r"Error response from daemon: (?P<reason>[^\n]+)")


def classify_failure(
    output: str, exit_status: int | None, params: DockerCtlInput
) -> DockerFailure | None:
    """Which known failure `output` shows, or None for any other error."""
    first_line = _first_error_line(output)
    if access := docker_access_problem(output, exit_status):
        return DockerFailure(_ACCESS_FAILURES[access.kind], None, access.line)
    if match := _NAME_IN_USE.search(output):
        return DockerFailure(FailureKind.NAME_IN_USE, match["subject"], match["id"])
    if match := _NO_CONTAINER.search(output):
        return DockerFailure(FailureKind.NO_CONTAINER, match["subject"], first_line)
    if _NO_GPU.search(output):
        return DockerFailure(FailureKind.NO_GPU_RUNTIME, None, first_line)
    if match := _NO_LOCAL_IMAGE.search(output) or _NO_SUCH_IMAGE.search(output):
        return DockerFailure(FailureKind.IMAGE_MISSING, match["subject"], _daemon_reason(output))
    if params.action == "pull":
        return DockerFailure(FailureKind.IMAGE_MISSING, params.image, _daemon_reason(output))
    return None


def explain_failure(
    failure: DockerFailure,
    host: str,
    params: DockerCtlInput,
    *,
    container_names: list[str] | None = None,
    image_refs: list[str] | None = None,
) -> str:
    """The message the model reads: what happened on `host` and what to do about it."""
    match failure.kind:
        case FailureKind.PERMISSION:
            return (
                f"permission denied on the Docker socket of {host}: the SSH user is not in the "
                "docker group; fix: sudo usermod -aG docker $USER, then log in again (or newgrp "
                f"docker). Docker said: {failure.detail}"
            )
        case FailureKind.NOT_INSTALLED:
            return (
                f"docker is not installed on {host} (command not found for the SSH user). Install "
                "Docker (e.g. apt-get install docker.io, plus nvidia-container-toolkit for GPUs) "
                "or check the SSH user's PATH."
            )
        case FailureKind.DAEMON_DOWN:
            return (
                f"the Docker daemon is not running on {host} ({failure.detail}). Start it "
                "(sudo systemctl start docker) and check `systemctl status docker` / "
                "`journalctl -u docker` if it does not come up."
            )
        case FailureKind.NAME_IN_USE:
            return (
                f"container name {failure.subject} is already in use by {failure.detail[:12]}; "
                "remove it (docker_ctl rm) or choose another name."
            )
        case FailureKind.NO_CONTAINER:
            existing = ", ".join(container_names or []) or "none"
            return (
                f"no such container {failure.subject} on {host}. Existing containers: {existing}. "
                "Use one of these names or IDs (docker_ctl ps lists them with their state)."
            )
        case FailureKind.NO_GPU_RUNTIME:
            return (
                f"Docker on {host} cannot give GPUs to containers (no NVIDIA runtime): install "
                "nvidia-container-toolkit, run `sudo nvidia-ctk runtime configure "
                "--runtime=docker` and restart docker."
            )
        case FailureKind.IMAGE_MISSING:
            return _image_missing(failure, host, params, image_refs)
    raise AssertionError(f"unhandled failure {failure.kind}")


def _image_missing(
    failure: DockerFailure, host: str, params: DockerCtlInput, image_refs: list[str] | None
) -> str:
    present = ", ".join(image_refs or []) or "none"
    if params.action in ("rmi", "inspect"):
        head = f"image {failure.subject} is not on {host}."
    elif params.pull == "never":
        head = (
            f"image {failure.subject} is not on {host}, and pulling was turned off (pull: never)."
        )
    else:
        head = (
            f"image {failure.subject} is not on {host} and could not be pulled: {failure.detail}. "
            "Pull it where a registry is reachable and `docker load` it, check the name and tag, "
            "or log in to the registry."
        )
    return f"{head} Images on {host}: {present}."


def _first_error_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[0] if lines else ""


def _daemon_reason(output: str) -> str:
    match = _DAEMON_LINE.search(output)
    return match["reason"].strip() if match else _first_error_line(output)
