"""Docker: installed and usable, its containers (with the memory each holds) and images."""

from __future__ import annotations

from tools.recon import parsers as p
from tools.recon.readers.section_reader import SectionReader
from tools.world.facts import (
    Container,
    DockerFacts,
    FactGroup,
    GpuFacts,
    Image,
)


def read_docker(reader: SectionReader, gpu: GpuFacts) -> DockerFacts:
    group = DockerFacts()
    section = reader.sections.get("docker-version")
    access = p.docker_access_problem(section.output, section.exit_status) if section else None
    if section is not None and access is not None and access.kind != "daemon_unreachable":
        group.sources.append(reader.source("docker-version"))
        group.permission_denied = access.kind == "permission_denied"
        group.installed, group.usable = group.permission_denied, False
        group.problem = access.line if group.permission_denied else section.problem()
    else:
        version = reader.read(group, "docker-version", p.parse_docker_version)
        if version is not None:
            group.installed = True
            group.client_version = version.client_version
            group.server_version = version.server_version
            group.usable = version.server_version is not None
            group.problem = version.server_error
    info = reader.read(DockerFacts(), "docker-info", p.parse_docker_info)
    if info is not None:
        group.runtimes = info.runtimes
    groups = reader.read(group, "groups", lambda text: text.split())
    if groups is not None:
        group.user_groups = groups
        group.in_docker_group = "docker" in groups
    if group.usable:
        group.containers = _containers(reader, group, gpu)
        group.images = reader.read(group, "docker-images", _images) or []
    return group


def _containers(reader: SectionReader, group: DockerFacts, gpu: GpuFacts) -> list[Container]:
    listed = reader.read(group, "docker-ps", p.parse_docker_ps_json) or []
    stats = {row.name: row for row in reader.read(FactGroup(), "docker-stats", _stats) or []}
    pids = reader.read(FactGroup(), "docker-pids", _container_pids) or {}
    gpu_memory = {proc.pid: proc.memory_bytes for proc in gpu.processes if proc.memory_bytes}
    containers = []
    for entry in listed:
        name = entry.names[0] if entry.names else (entry.id or "?")
        container = Container(
            name=name, image=entry.image, state=entry.state, status=entry.status, ports=entry.ports
        )
        if name in stats and stats[name].memory_used_bytes and entry.state == "running":
            container.memory_bytes = stats[name].memory_used_bytes
            container.memory_source = "docker stats"
            group.sources.append(reader.source("docker-stats"))
        elif pids.get(name) in gpu_memory:
            container.memory_bytes = gpu_memory[pids[name]]
            container.memory_source = "nvidia-smi process of the container"
        containers.append(container)
    return containers


def _stats(text: str) -> list[p.ContainerStats]:
    if "is not a docker command" in text or "not simulated" in text:
        raise p.ParseError("`docker stats` output", text)
    return p.parse_docker_stats_json(text)


def _container_pids(text: str) -> dict[str, int]:
    pids = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2 and words[0].startswith("/") and words[1].isdigit():
            pids[words[0].lstrip("/")] = int(words[1])
    return pids


def _images(text: str) -> list[Image]:
    return [
        Image(repository=i.repository, tag=i.tag, id=i.id or None, size=i.size)
        for i in p.parse_docker_images_json(text)
    ]
