"""Tool results that refresh the world model: docker_ctl listings replace a host's container and
image rows; a passed endpoint_check records the endpoint and what it measured."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agent.loop.events import Event, ToolResultEvent
from agent.loop.recorder import SessionListener
from agent.world.model import Endpoint, WorldModel
from tools.recon.facts import Container, Image, Provenance


def _container(row: dict[str, Any]) -> Container:
    names = row.get("names") or [row.get("name", "?")]
    return Container(
        name=names[0],
        image=row.get("image", ""),
        state=row.get("state"),
        status=row.get("status"),
        ports=row.get("ports"),
    )


def _image(row: dict[str, Any]) -> Image:
    return Image(
        repository=row.get("repository", ""),
        tag=row.get("tag"),
        id=row.get("id"),
        size=row.get("size"),
    )


class DockerFeed(SessionListener):
    """After each successful docker_ctl call, refresh that host's containers and images."""

    def __init__(self, world: WorldModel) -> None:
        self.world = world

    def on_event(self, event: Event) -> None:
        if not isinstance(event, ToolResultEvent) or event.name != "docker_ctl":
            return
        host = event.data.get("host")
        if not host or ("containers" not in event.data and "images" not in event.data):
            return
        rows = event.data.get("containers")
        images = event.data.get("images")
        self.world.refresh_docker(
            host,
            [_container(r) for r in rows] if rows is not None else None,
            [_image(r) for r in images] if images is not None else None,
            Provenance(
                host=host,
                command=str(event.meta.get("command", "docker_ctl")),
                collected_at=datetime.now(UTC),
                exit_status=event.meta.get("exit_status"),
            ),
        )


class EndpointFeed(SessionListener):
    """Record every endpoint that passed a check, with its measured rates."""

    def __init__(self, world: WorldModel) -> None:
        self.world = world

    def on_event(self, event: Event) -> None:
        if not isinstance(event, ToolResultEvent) or event.name != "endpoint_check":
            return
        if event.is_error or "endpoint" not in event.data:
            return
        single = event.data.get("single") or {}
        self.world.record_endpoint(
            Endpoint(
                where=event.data["endpoint"],
                model=event.data.get("model"),
                single_stream_tok_s=single.get("tok_s"),
                ttft_s=single.get("ttft_s"),
                aggregate_tok_s=event.data.get("aggregate_tok_s"),
                concurrency=event.data.get("concurrency"),
                checked_at=datetime.now(UTC),
            )
        )
