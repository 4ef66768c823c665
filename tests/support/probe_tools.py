"""Small real tools for exercising the loop: they do real (local, harmless) work and record it."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field

from tools.base import Tool, ToolContext, ToolResult
from tools.risk.assessment import Risk, RiskAssessment


class EchoInput(BaseModel):
    text: str
    delay_s: float = Field(default=0.0, ge=0, le=60)


class EchoTool(Tool[EchoInput]):
    """Read-only: returns its text after an optional delay; remembers every run."""

    name = "echo"
    description = "Return the text given, after an optional delay."
    Input = EchoInput

    def __init__(self) -> None:
        self.runs: list[str] = []

    async def run(self, params: EchoInput, ctx: ToolContext) -> ToolResult:
        self.runs.append(params.text)
        if params.delay_s:
            await asyncio.sleep(params.delay_s)
        return ToolResult(text=params.text, data={"length": len(params.text)})


class FailInput(BaseModel):
    reason: str = "boom"


class FailTool(Tool[FailInput]):
    """Raises inside run, the way a buggy tool would."""

    name = "fail"
    description = "Always fails."
    Input = FailInput

    async def run(self, params: FailInput, ctx: ToolContext) -> ToolResult:
        raise RuntimeError(params.reason)


class SleepInput(BaseModel):
    seconds: float = Field(ge=0, le=3600)
    timeout: float = Field(default=1.0, gt=0)


class SleepTool(Tool[SleepInput]):
    """Sleeps; its own timeout lets tests reach the executor's per-call deadline quickly."""

    name = "sleep"
    description = "Sleep for a number of seconds."
    Input = SleepInput

    def __init__(self) -> None:
        self.finished = 0

    def timeout_s(self, params: SleepInput) -> float:
        return params.timeout

    async def run(self, params: SleepInput, ctx: ToolContext) -> ToolResult:
        await asyncio.sleep(params.seconds)
        self.finished += 1
        return ToolResult(text=f"slept {params.seconds} s")


class WriteInput(BaseModel):
    path: str


class WriteTool(Tool[WriteInput]):
    """Mutating: must never run without passing the gate."""

    name = "write_marker"
    description = "Write a marker file."
    Input = WriteInput

    def __init__(self) -> None:
        self.runs = 0

    def risk(self, params: WriteInput) -> RiskAssessment:
        return RiskAssessment(Risk.MUTATING, f"{self.name} is {Risk.MUTATING.label}")

    async def run(self, params: WriteInput, ctx: ToolContext) -> ToolResult:
        self.runs += 1
        return ToolResult(text=f"wrote {params.path}")
