import asyncio

import pytest

from agent.loop.calls import ToolCall
from agent.loop.executor import Executor
from agent.runtime.settings import Settings
from tests.support.probe_tools import EchoTool, FailTool, SleepTool, WriteTool
from tools.base import ToolContext
from tools.registry import ToolRegistry


@pytest.fixture
def tools():
    return EchoTool(), FailTool(), SleepTool(), WriteTool()


@pytest.fixture
def executor(tools, tmp_path):
    return Executor(
        ToolRegistry(tools), ToolContext(spill_dir=tmp_path), limits=Settings().executor_limits()
    )


async def test_results_come_back_in_call_order_whatever_finishes_first(executor):
    calls = [
        ToolCall("a", "echo", {"text": "slow", "delay_s": 0.2}),
        ToolCall("b", "echo", {"text": "fast"}),
    ]
    results = await executor.run_batch(calls)
    assert [r.text for r in results] == ["slow", "fast"]
    assert all(r.meta["duration_s"] >= 0 for r in results)


async def test_invalid_input_is_explained_and_nothing_runs(executor, tools):
    echo = tools[0]
    results = await executor.run_batch([ToolCall("a", "echo", {"txt": "x"})])
    assert results[0].is_error
    assert "Invalid input for echo; nothing was run" in results[0].text
    assert "- text: Field required" in results[0].text
    assert echo.runs == []


async def test_unknown_tool_lists_the_known_ones(executor):
    (result,) = await executor.run_batch([ToolCall("a", "nope", {})])
    assert result.is_error
    assert "Unknown tool 'nope'" in result.text and "echo" in result.text


async def test_a_failing_call_does_not_cancel_its_siblings(executor, tools):
    calls = [
        ToolCall("a", "fail", {"reason": "disk on fire"}),
        ToolCall("b", "echo", {"text": "still here", "delay_s": 0.05}),
        ToolCall("c", "sleep", {"seconds": 30, "timeout": 0.1}),
    ]
    results = await executor.run_batch(calls)
    assert results[0].is_error and "fail failed: RuntimeError: disk on fire" in results[0].text
    assert not results[1].is_error and results[1].text == "still here"
    assert results[2].is_error and "timed out after 0.1 s" in results[2].text
    assert tools[2].finished == 0


async def test_mutating_call_is_refused_without_a_gate_that_allows_it(executor, tools):
    (result,) = await executor.run_batch([ToolCall("a", "write_marker", {"path": "/x"})])
    assert result.is_error and "Not run" in result.text and "mutating" in result.text
    assert tools[3].runs == 0


async def test_cancel_batch_gives_every_unfinished_call_a_result(executor, tools):
    calls = [
        ToolCall("a", "echo", {"text": "done"}),
        ToolCall("b", "sleep", {"seconds": 30, "timeout": 60}),
        ToolCall("c", "sleep", {"seconds": 30, "timeout": 60}),
    ]
    batch = asyncio.create_task(executor.run_batch(calls))
    await asyncio.sleep(0.1)
    executor.cancel_batch()
    results = await batch
    assert len(results) == 3
    assert results[0].text == "done"
    for result in results[1:]:
        assert result.is_error and "Cancelled before it finished" in result.text
    assert tools[2].finished == 0


async def test_per_key_cap_queues_calls_on_one_host(tmp_path):
    running = 0
    peak = 0

    class HostEcho(EchoTool):
        def hosts(self, params):
            return ["spark-a"]

        async def run(self, params, ctx):
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.02)
            running -= 1
            return await super().run(params, ctx)

    executor = Executor(
        ToolRegistry([HostEcho()]),
        ToolContext(spill_dir=tmp_path),
        limits=Settings(per_key_concurrency=3).executor_limits(),
    )
    results = await executor.run_batch([ToolCall(str(i), "echo", {"text": "x"}) for i in range(10)])
    assert len(results) == 10 and not any(r.is_error for r in results)
    assert peak == 3
