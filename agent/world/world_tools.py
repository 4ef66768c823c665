"""The `recon` and `world_note` tools: how the model fills the world model and annotates it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field

from agent.loop.events import WorldUpdate
from agent.world.model import WorldListener, WorldModel
from agent.world.render import finding_lines, render_compact
from tools.base import Tool, ToolContext, ToolResult
from tools.checks import GB, Finding
from tools.recon.probe import PROBE_TIMEOUT_S, probe_hosts
from tools.ssh.errors import UnknownHostError

RECON_DEADLINE_S = PROBE_TIMEOUT_S + 30


def transcript_listener(emit: Callable[[WorldUpdate], None]) -> WorldListener:
    """A world listener that records each change as a `world_update` event (pass recorder.emit)."""

    def listener(host: str | None, summary: str, new: list[Finding]) -> None:
        emit(WorldUpdate(host=host, summary=summary, findings=[f.model_dump() for f in new]))

    return listener


class ReconInput(BaseModel):
    hosts: list[str] | Literal["all"] = Field(
        default="all", description='Inventory host names to probe, or "all".'
    )
    model_size_gb: float | None = Field(
        default=None,
        gt=0,
        description="Size of the model's weights in GB, to check whether it fits.",
    )


class ReconTool(Tool[ReconInput]):
    name = "recon"
    description = (
        "Probe hosts in parallel with one read-only script each (identity, OS/DGX release, GPU, "
        "driver/CUDA, memory, disks, Docker and containers, RDMA ports, interfaces, Python "
        "packages, listening servers). Updates the world model and returns a compact summary "
        "per host plus findings (e.g. memory held by containers, links down, version skew). "
        "Give model_size_gb to check whether a model fits."
    )
    Input = ReconInput

    def __init__(self, world: WorldModel, inventory_hosts: list[str] | None = None) -> None:
        self.world = world
        self.inventory_hosts = inventory_hosts

    def hosts(self, params: ReconInput) -> list[str]:
        if params.hosts == "all":
            return list(self.inventory_hosts or [])
        return list(params.hosts)

    def summary(self, params: ReconInput) -> str:
        size = f" against a {params.model_size_gb:g} GB model" if params.model_size_gb else ""
        return f"probe pack{size}"

    def timeout_s(self, params: ReconInput) -> float:
        return RECON_DEADLINE_S

    async def run(self, params: ReconInput, ctx: ToolContext) -> ToolResult:
        if ctx.ssh is None:
            return ToolResult.error("recon needs an inventory: start Scout with --inventory FILE.")
        known = ctx.ssh.inventory.names()
        names = known if params.hosts == "all" else list(params.hosts)
        unknown = [name for name in names if name not in known]
        if unknown:
            return ToolResult.error(str(UnknownHostError(unknown[0], known)))
        if params.model_size_gb is not None:
            self.world.model_size_bytes = round(params.model_size_gb * GB)  # applied with the round
        ctx.report(f"probing {', '.join(names)}")
        probe_round = await probe_hosts(ctx.ssh, names)
        had_findings = bool(self.world.findings)
        new = self.world.apply_round(probe_round.facts, probe_round.failures)
        text = render_compact(self.world, names)
        if had_findings and new:
            text += "\nnew since the last recon:\n" + "\n".join(finding_lines(new))
        return ToolResult(
            text=text,
            is_error=not probe_round.facts,
            data={
                "hosts": {n: f.model_dump(mode="json") for n, f in probe_round.facts.items()},
                "unreachable": probe_round.failures,
                "findings": [f.model_dump() for f in self.world.findings],
            },
            meta={"hosts": names, "unreachable": sorted(probe_round.failures)},
        )


class WorldNoteInput(BaseModel):
    belief: str = Field(min_length=1, max_length=500, description="What you believe, one claim.")
    evidence: str = Field(
        min_length=1, max_length=500, description="Why: the tool output or source it rests on."
    )
    host: str | None = Field(default=None, description="The host it is about, if one.")


class WorldNoteTool(Tool[WorldNoteInput]):
    name = "world_note"
    description = (
        "Record a belief about the cluster with its evidence (e.g. 'enp1s0f1np1 is the cabled "
        "port on both hosts'). Notes are shown apart from probed facts; they do not change them."
    )
    Input = WorldNoteInput

    def __init__(self, world: WorldModel) -> None:
        self.world = world

    def hosts(self, params: WorldNoteInput) -> list[str]:
        return [params.host] if params.host else []

    async def run(self, params: WorldNoteInput, ctx: ToolContext) -> ToolResult:
        note = self.world.add_note(params.belief, params.evidence, params.host)
        return ToolResult(
            text=f"noted ({len(self.world.notes)} notes): {note.belief}",
            data={"note": note.model_dump(mode="json")},
        )
