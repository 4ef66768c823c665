"""Compact text for the model: aligned tables of containers, images and stats; inspect as facts."""

from __future__ import annotations

from collections.abc import Sequence

from tools.recon.parsers.docker_inspect import ContainerDetails, ImageDetails
from tools.recon.parsers.docker_rows import ContainerStats, DockerContainer, DockerImage

MAX_CELL = 60


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns, two spaces apart; long cells are cut with '…'."""
    cells = [[_cell(value) for value in row] for row in [header, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(value.ljust(width) for value, width in zip(row, widths, strict=True))
             for row in cells]  # fmt: skip
    return "\n".join(line.rstrip() for line in lines)


def _cell(value: str) -> str:
    return value if len(value) <= MAX_CELL else value[: MAX_CELL - 1] + "…"


def containers_table(containers: Sequence[DockerContainer]) -> str:
    if not containers:
        return "(no containers)"
    rows = [
        [
            ",".join(c.names),
            (c.id or "")[:12],
            c.image,
            c.state or "",
            c.status or "",
            c.ports or "",
        ]
        for c in containers
    ]
    return table(["NAME", "ID", "IMAGE", "STATE", "STATUS", "PORTS"], rows)


def images_table(images: Sequence[DockerImage]) -> str:
    if not images:
        return "(no images)"
    rows = [
        [i.reference, i.id.removeprefix("sha256:")[:12], i.size or "", i.created_since or ""]
        for i in images
    ]
    return table(["IMAGE", "ID", "SIZE", "CREATED"], rows)


def stats_table(stats: Sequence[ContainerStats]) -> str:
    if not stats:
        return "(no running containers)"
    rows = [
        [
            s.name,
            _percent(s.cpu_percent),
            s.memory_usage or "",
            _percent(s.memory_percent),
            s.pids or "",
        ]
        for s in stats
    ]
    return table(["NAME", "CPU %", "MEM USAGE / LIMIT", "MEM %", "PIDS"], rows)


def _percent(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}%"  # as docker prints it


def container_facts(details: ContainerDetails) -> str:
    state = details.status or "unknown"
    if not details.running and details.exit_code is not None:
        state += f" (exit code {details.exit_code})"
    facts = [
        ("name", details.name),
        ("id", details.id[:12]),
        ("image", details.image),
        ("state", state),
        ("error", details.error or ""),
        ("started", details.started_at or ""),
        ("finished", "" if details.running else details.finished_at or ""),
        ("restart policy", details.restart_policy or ""),
        ("network", details.network_mode or ""),
        ("ipc", details.ipc_mode or ""),
        ("gpus", "; ".join(details.gpus)),
        ("mounts", "; ".join(details.mounts)),
        ("ports", "; ".join(details.ports)),
        ("entrypoint", " ".join(details.entrypoint)),
        ("cmd", " ".join(details.cmd)),
        ("env", " ".join(f"{k}={v}" for k, v in details.env.items())),
        ("labels", " ".join(f"{k}={v}" for k, v in details.labels.items())),
    ]
    return _facts(facts)


def image_facts(details: ImageDetails) -> str:
    size = f"{details.size_bytes / 1e9:.2f} GB" if details.size_bytes is not None else ""
    facts = [
        ("tags", ", ".join(details.tags)),
        ("id", details.id.removeprefix("sha256:")[:12]),
        ("created", details.created or ""),
        ("platform", f"{details.os or '?'}/{details.architecture or '?'}"),
        ("size", size),
        ("entrypoint", " ".join(details.entrypoint)),
        ("cmd", " ".join(details.cmd)),
        ("env", " ".join(f"{k}={v}" for k, v in details.env.items())),
    ]
    return _facts(facts)


def _facts(pairs: Sequence[tuple[str, str]]) -> str:
    return "\n".join(f"{name}: {value}" for name, value in pairs if value)
