"""`recon`: the probe pack on hosts in parallel, applied to the world model as one round.

The model reads back the world model's compact view of those hosts and what is new since the
last round, not the raw probe output.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from tools.base import Tool, ToolContext, ToolResult
from tools.checks import GB
from tools.recon.probe import PROBE_TIMEOUT_S, probe_hosts
from tools.ssh.errors import UnknownHostError
from tools.ssh.pool import SSHPool
from tools.wall import HostWalls

RECON_DEADLINE_S = PROBE_TIMEOUT_S + 30


class ReconInput(BaseModel):
    hosts: list[str] | Literal["all"] = Field(default="all", description='Host names, or "all".')
    model_size_gb: float | None = Field(
        default=None,
        gt=0,
        description="The model's weights in GB, to check the fit.",
    )


class ReconTool(Tool[ReconInput]):
    name = "recon"
    description = (
        "Probe hosts in parallel, read-only: OS/DGX release, GPU, driver/CUDA, memory, disks, "
        "Docker, RDMA ports, interfaces, Python packages, servers. Updates the world model; "
        "returns a summary per host and findings."
    )
    Input = ReconInput

    def __init__(self, pool: SSHPool, walls: HostWalls | None = None) -> None:
        """`pool`: the session's SSH connections; its inventory names the hosts "all" means."""
        self.pool = pool
        self.walls = walls or HostWalls()

    def hosts(self, params: ReconInput) -> list[str]:
        if params.hosts == "all":
            return self.pool.inventory.names()
        return list(params.hosts)

    def summary(self, params: ReconInput) -> str:
        size = f" against a {params.model_size_gb:g} GB model" if params.model_size_gb else ""
        return f"probe pack{size}"

    def timeout_s(self, params: ReconInput) -> float:
        return RECON_DEADLINE_S

    async def run(self, params: ReconInput, ctx: ToolContext) -> ToolResult:
        if ctx.world is None:
            return ToolResult.error("recon needs the session's world model, and there is none.")
        world = ctx.world
        known = self.pool.inventory.names()
        names = known if params.hosts == "all" else list(params.hosts)
        unknown = [name for name in names if name not in known]
        if unknown:
            return ToolResult.error(str(UnknownHostError(unknown[0], known)))
        if params.model_size_gb is not None:
            world.model_size_bytes = round(params.model_size_gb * GB)  # applied with the round
        ctx.report(f"probing {', '.join(names)}")
        probe_round = await probe_hosts(self.pool, names)
        had_findings = bool(world.findings)
        new = world.apply_round(probe_round.facts, probe_round.failures)
        text = world.describe(names, new if had_findings else None)
        for host, facts in probe_round.facts.items():  # its finding tells the model (checks/)
            self.walls.record(host, bool(facts.wall.inside), facts.wall.detail or "unknown")
        return ToolResult(
            text=text,
            is_error=not probe_round.facts,
            data={
                "hosts": {n: f.model_dump(mode="json") for n, f in probe_round.facts.items()},
                "unreachable": probe_round.failures,
                "findings": [f.model_dump() for f in world.findings],
            },
            meta={"hosts": names, "unreachable": sorted(probe_round.failures)},
        )
