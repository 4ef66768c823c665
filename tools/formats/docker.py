"""Docker formats: `docker ps` as a table or as JSON lines, and `docker info`."""

from __future__ import annotations

from tools.formats.format import Format, Told, sign
from tools.recon.parsers.docker import parse_docker_info
from tools.recon.parsers.docker_rows import (
    DockerContainer,
    parse_docker_ps_json,
    parse_docker_ps_table,
)


def _containers(containers: list[DockerContainer]) -> Told:
    facts: dict[str, object] = {
        ", ".join(c.names) or c.id or "?": f"{c.image} ({c.status or c.state})" for c in containers
    }
    return facts, []


def _read_info(text: str) -> Told:
    info = parse_docker_info(text)
    facts: dict[str, object] = {"client": info.client_version, "server": info.server_version,
                                "runtimes": ", ".join(info.runtimes) or None}  # fmt: skip
    findings = (
        [f"the Docker daemon did not answer: {info.server_error}"] if info.server_error else []
    )
    if info.runtimes and "nvidia" not in info.runtimes:
        findings.append("Docker has no nvidia runtime: containers cannot reach the GPUs by it")
    return facts, findings


FORMATS = (
    Format(
        "docker ps",
        (
            sign(r"^(?:CONTAINER ID|NAMES)\s{2,}\S"),
            sign(r"\bIMAGE\s{2,}", 0.3),
            sign(r"\bSTATUS\b", 0.2),
        ),
        lambda text: _containers(parse_docker_ps_table(text)),
    ),
    Format(
        "docker ps --format json",
        (sign(r'^\{"Command":'), sign(r'"Image":"', 0.5)),
        lambda text: _containers(parse_docker_ps_json(text)),
    ),
    Format(
        "docker info",
        (
            sign(r"^Client:(?: Docker Engine)?"),
            sign(r"^Server:", 0.5),
            sign(r"^ Storage Driver:", 0.3),
        ),
        _read_info,
    ),
)
