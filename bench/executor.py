"""Executor benchmark: a batch must cost its slowest call, not the sum.

Runs N calls of 200 ms as one batch (median of 5 runs) and divides the batch's makespan by the
slowest single call; also measures the executor's own overhead per call with no-op calls.
Last line: `executor makespan/slowest N=64: X.XX` (goal: at most 1.10).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pydantic import BaseModel

from agent.loop.calls import ToolCall
from agent.loop.executor import Executor
from agent.runtime.settings import Settings
from tools.base import Tool, ToolContext, ToolResult
from tools.registry import ToolRegistry


class WaitInput(BaseModel):
    text: str
    delay_s: float = 0.0


class WaitTool(Tool[WaitInput]):
    """A read that only waits: what is left of a batch's time is the executor's own."""

    name = "echo"
    description = "Return the text given, after a delay."
    Input = WaitInput

    async def run(self, params: WaitInput, ctx: ToolContext) -> ToolResult:
        if params.delay_s:
            await asyncio.sleep(params.delay_s)
        return ToolResult(text=params.text)


def make_executor(spill: Path, calls: int) -> Executor:
    limits = Settings(max_concurrency=max(64, calls)).executor_limits()
    return Executor(ToolRegistry([WaitTool()]), ToolContext(spill_dir=spill), limits=limits)


async def makespan_ratio(executor: Executor, n: int, delay_s: float) -> float:
    calls = [ToolCall(f"c{i}", "echo", {"text": str(i), "delay_s": delay_s}) for i in range(n)]
    started = time.perf_counter()
    results = await executor.run_batch(calls)
    makespan = time.perf_counter() - started
    slowest = max(result.meta["duration_s"] for result in results)
    return makespan / slowest


async def overhead_per_call_ms(executor: Executor, n: int) -> float:
    calls = [ToolCall(f"c{i}", "echo", {"text": "x"}) for i in range(n)]
    started = time.perf_counter()
    await executor.run_batch(calls)
    return (time.perf_counter() - started) / n * 1000


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=64, help="calls per batch")
    parser.add_argument("--delay", type=float, default=0.2, help="seconds per call")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as spill:
        executor = make_executor(Path(spill), max(args.n, 1000))
        overheads = [await overhead_per_call_ms(executor, 1000) for _ in range(args.reps)]
        overhead = statistics.median(overheads)
        print(f"executor overhead per call (1000 no-op calls): {overhead:.3f} ms")
        ratios = [await makespan_ratio(executor, args.n, args.delay) for _ in range(args.reps)]
    print(f"runs: {', '.join(f'{r:.3f}' for r in ratios)}")
    print(f"executor makespan/slowest N={args.n}: {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    asyncio.run(main())
