"""docker_ctl's fresh listings as world-model facts, so the world follows what Docker just did.

A call that listed a host's containers or images (ps, images, or the refresh after a change or a
failure) hands the typed rows to the world store, which replaces that host's rows and keeps the
memory recon measured for containers still running.
"""

from __future__ import annotations

from datetime import UTC, datetime

from tools.recon.parsers.docker_rows import DockerContainer, DockerImage
from tools.world.facts import Container, Image, Provenance
from tools.world.store import WorldStore


def container_fact(row: DockerContainer) -> Container:
    return Container(
        name=row.names[0] if row.names else "?",
        image=row.image,
        state=row.state,
        status=row.status,
        ports=row.ports,
    )


def image_fact(row: DockerImage) -> Image:
    return Image(repository=row.repository, tag=row.tag, id=row.id, size=row.size)


def refresh_world(
    world: WorldStore,
    host: str,
    containers: list[DockerContainer] | None,
    images: list[DockerImage] | None,
    *,
    command: str,
    exit_status: int | None,
) -> None:
    """Give the world the rows a call listed (None: that kind was not listed)."""
    if containers is None and images is None:
        return
    world.refresh_docker(
        host,
        [container_fact(c) for c in containers] if containers is not None else None,
        [image_fact(i) for i in images] if images is not None else None,
        Provenance(
            host=host, command=command, collected_at=datetime.now(UTC), exit_status=exit_status
        ),
    )
