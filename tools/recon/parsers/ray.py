"""`ray status`: how many nodes joined and what resources (GPUs) the cluster sees."""

import re

from pydantic import BaseModel, computed_field

from tools.recon.parsers.errors import ParseError
from tools.recon.parsers.units import parse_size_bytes

_NO_RAY = re.compile(r"Could not find any running Ray instance|ConnectionError", re.IGNORECASE)
_NODE_LINE = re.compile(r"^(?P<count>\d+)\s+(?P<name>\S+)$")
_AMOUNT = r"(?P<{0}>\d+(?:\.\d+)?)\s*(?P<{0}_unit>[KMGTPE]?i?B)?"
_USAGE_LINE = re.compile(
    rf"^{_AMOUNT.format('used')}\s*/\s*{_AMOUNT.format('total')}\s+(?P<name>\S+)"
    r"(?:\s+\((?P<pg_used>\d+(?:\.\d+)?)\s*\S*\s+used of\s+(?P<pg_reserved>\d+(?:\.\d+)?)\s*\S*"
    r"\s+reserved in placement groups\))?\s*$"
)
_TITLES = {"Node status", "Resources"}
_SECTIONS = {
    "Active:": "active",
    "Healthy:": "active",
    "Idle:": "idle",
    "Pending:": "pending",
    "Recent failures:": "failures",
    "Total Usage:": "usage",
    "Usage:": "usage",
    "Total Demands:": "demands",
    "Pending Demands:": "demands",
    "Demands:": "demands",
}


class RayResource(BaseModel):
    """One usage line; memory-like resources are in bytes, others in Ray's units (CPUs, GPUs)."""

    name: str
    used: float
    total: float
    placement_group_used: float | None = None
    placement_group_reserved: float | None = None


class RayStatus(BaseModel):
    running: bool
    error: str | None = None
    active_nodes: list[str] = []
    active_node_count: int = 0
    idle_nodes: list[str] = []
    idle_node_count: int = 0
    pending_nodes: list[str] = []
    recent_failures: list[str] = []
    resources: list[RayResource] = []
    pending_demands: list[str] = []

    @computed_field
    @property
    def node_count(self) -> int:
        """Nodes in the cluster: newer Ray lists nodes without work under `Idle:`."""
        return self.active_node_count + self.idle_node_count

    def resource(self, name: str) -> RayResource | None:
        return next((item for item in self.resources if item.name == name), None)


def parse_ray_status(text: str) -> RayStatus:
    """Read `ray status` (new `Total Usage:` and old `Usage:` forms); no cluster → running=False."""
    if "Node status" not in text and "Usage:" not in text:
        if _NO_RAY.search(text):
            line = next(line for line in text.splitlines() if _NO_RAY.search(line))
            return RayStatus(running=False, error=line.strip())
        raise ParseError("`ray status` output ('Node status', 'Usage:')", text)
    status = RayStatus(running=True)
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("-", "=")) or (line.startswith("(") and line.endswith(")")):
            continue
        if line in _SECTIONS or line in _TITLES or line.endswith(":"):
            section = _SECTIONS.get(line)
        elif section is not None:
            _add_line(status, section, line)
    return status


def _add_line(status: RayStatus, section: str, line: str) -> None:
    if section in ("active", "idle"):
        match = _NODE_LINE.match(line)
        name, count = (match["name"], int(match["count"])) if match else (line, 1)
        if section == "active":
            status.active_nodes.append(name)
            status.active_node_count += count
        else:
            status.idle_nodes.append(name)
            status.idle_node_count += count
    elif section == "pending":
        status.pending_nodes.append(line)
    elif section == "failures":
        status.recent_failures.append(line)
    elif section == "demands":
        status.pending_demands.append(line)
    elif section == "usage":
        resource = parse_ray_resource_line(line)
        if resource is not None:
            status.resources.append(resource)


def parse_ray_resource_line(line: str) -> RayResource | None:
    """One usage line (`0.0/2.0 GPU`, `0B/218.83GiB memory`, with or without the placement-group
    suffix); None when the line is not a usage line."""
    match = _USAGE_LINE.match(line.strip())
    if match is None:
        return None
    total_unit = match["total_unit"]
    used_unit = match["used_unit"] or total_unit
    if total_unit or used_unit:
        used = float(parse_size_bytes(match["used"] + (used_unit or "")))
        total = float(parse_size_bytes(match["total"] + (total_unit or "")))
    else:
        used, total = float(match["used"]), float(match["total"])
    pg_used, pg_reserved = match["pg_used"], match["pg_reserved"]
    return RayResource(
        name=match["name"],
        used=used,
        total=total,
        placement_group_used=float(pg_used) if pg_used else None,
        placement_group_reserved=float(pg_reserved) if pg_reserved else None,
    )
