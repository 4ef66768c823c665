"""Which calls the executor walls: read-only ones no human decided, never a human's decision."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from agent.loop.calls import GateVerdict, PreparedCall, ToolCall
from agent.loop.executor import Executor
from agent.runtime.settings import Settings
from tools.base import Tool, ToolContext, ToolResult
from tools.registry import ToolRegistry
from tools.risk.assessment import Risk, RiskAssessment


class NoteInput(BaseModel):
    risk: str = "read_only"


class NoteWall(Tool[NoteInput]):
    """Says whether it was told to run inside the wall."""

    name = "note_wall"
    description = "Report ctx.wall."
    Input = NoteInput

    def risk(self, params: NoteInput) -> RiskAssessment:
        return RiskAssessment(Risk.from_label(params.risk), "as asked")

    async def run(self, params: NoteInput, ctx: ToolContext) -> ToolResult:
        return ToolResult(text="walled" if ctx.wall else "bare")


class AllowGate:
    """Allows everything; `human` says whether a person decided."""

    def __init__(self, human: bool) -> None:
        self.human = human

    async def check(self, prepared: PreparedCall) -> GateVerdict:
        return GateVerdict(allowed=True, human=self.human)


async def ran(tmp_path: Path, risk: str, *, human: bool) -> str:
    executor = Executor(
        ToolRegistry([NoteWall()]),
        ToolContext(spill_dir=tmp_path),
        limits=Settings().executor_limits(),
        gate=AllowGate(human),
    )
    [result] = await executor.run_batch([ToolCall("c1", "note_wall", {"risk": risk})])
    assert executor.context.wall is False  # the session's context is never changed
    return result.text


async def test_a_read_no_human_decided_runs_walled(tmp_path: Path) -> None:
    assert await ran(tmp_path, "read_only", human=False) == "walled"


async def test_a_read_a_human_approved_and_any_change_run_as_approved(tmp_path: Path) -> None:
    assert await ran(tmp_path, "read_only", human=True) == "bare"
    assert await ran(tmp_path, "mutating", human=True) == "bare"
    assert await ran(tmp_path, "mutating", human=False) == "bare"  # an allow rule: not a read
