"""`world_note`: the model records a belief with its evidence, kept apart from probed facts."""

from __future__ import annotations

from pydantic import BaseModel, Field

from tools.base import Tool, ToolContext, ToolResult


class WorldNoteInput(BaseModel):
    belief: str = Field(min_length=1, max_length=500, description="One claim.")
    evidence: str = Field(
        min_length=1, max_length=500, description="Why: the tool output or source it rests on."
    )
    host: str | None = Field(default=None, description="The host it is about, if one.")


class WorldNoteTool(Tool[WorldNoteInput]):
    name = "world_note"
    description = (
        "Record a belief about the cluster with its evidence (e.g. 'enp1s0f1np1 is the cabled "
        "port on both hosts'); shown apart from probed facts, it does not change them."
    )
    Input = WorldNoteInput

    def hosts(self, params: WorldNoteInput) -> list[str]:
        return [params.host] if params.host else []

    async def run(self, params: WorldNoteInput, ctx: ToolContext) -> ToolResult:
        if ctx.world is None:
            return ToolResult.error("world_note needs the session's world model; there is none.")
        note = ctx.world.add_note(params.belief, params.evidence, params.host)
        return ToolResult(
            text=f"noted ({len(ctx.world.notes)} notes): {note.belief}",
            data={"note": note.model_dump(mode="json")},
        )
