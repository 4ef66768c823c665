"""`recall_result`: read a compacted tool result again, by the id of the call that made it.

Compaction (agent/loop/compaction.py) replaces old results with one-line stubs that name this
tool; the session lends it a lookup over every result of the session (resumed ones included).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from tools.base import Tool, ToolContext, ToolResult
from tools.text.bounded import bound_text

ResultLookup = Callable[[str], str | None]


class RecallInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool_use_id: str = Field(min_length=1, description="The id a compacted result names.")


class RecallResultTool(Tool[RecallInput]):
    name = "recall_result"
    description = "Read again the full text of an earlier tool result that was compacted."
    Input = RecallInput

    def __init__(self, lookup: ResultLookup) -> None:
        self.lookup = lookup

    def summary(self, params: RecallInput) -> str:
        return params.tool_use_id

    async def run(self, params: RecallInput, ctx: ToolContext) -> ToolResult:
        text = self.lookup(params.tool_use_id)
        if text is None:
            return ToolResult.error(
                f"No result of this session has the id {params.tool_use_id!r}; use the id in a "
                "compacted result's stub."
            )
        bounded = bound_text(text, spill_dir=ctx.spill_dir, label=f"recall-{params.tool_use_id}")
        return ToolResult(text=bounded.text, meta={"truncated": bounded.truncated})
