"""Runs one turn's tool calls as a batch: validate, gate, run concurrently, results in call order.

A batch costs its slowest call, not the sum. One failing call never cancels its siblings; a
cancelled batch still yields exactly one result per call, so the conversation stays valid.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import structlog
from pydantic import BaseModel, ValidationError

from agent.loop import history
from agent.loop.calls import Gate, PreparedCall, ReadOnlyGate, ToolCall
from tools.base import Reason, Tool, ToolContext, ToolResult
from tools.registry import ToolRegistry
from tools.risk.assessment import Risk, RiskAssessment
from tools.text.validation import validation_problems

log = structlog.get_logger(__name__)

CANCELLED_TEXT = (
    "Cancelled before it finished (the user stopped the batch); its effect on the host is "
    "unknown — check the state before acting on it."
)


@dataclass(frozen=True)
class ExecutorLimits:
    """Deadline and concurrency caps; the values come from Settings (one place for defaults)."""

    default_timeout_s: float
    max_concurrency: int
    per_key_concurrency: int


class BatchObserver:
    """Hooks the faces and the transcript use; the defaults do nothing."""

    def call_prepared(self, prepared: PreparedCall) -> None: ...

    def call_started(self, prepared: PreparedCall) -> None: ...

    def call_finished(self, call: ToolCall, result: ToolResult) -> None: ...


def describe_validation_error(tool_name: str, exc: ValidationError) -> str:
    """Turn pydantic's errors into a short list the model can fix its input from."""
    lines = [f"Invalid input for {tool_name}; nothing was run. Fix these and call again:"]
    lines += [f"- {problem}" for problem in validation_problems(exc)]
    return "\n".join(lines)


def judge_risk(tool: Tool, params: BaseModel) -> RiskAssessment:
    """`tool.risk(params)`; if judging fails, the call counts as destructive (fail closed)."""
    try:
        return tool.risk(params)
    except Exception as exc:  # a classifier bug must not let a call through
        log.exception("risk.failed", tool=tool.name)
        return RiskAssessment(Risk.DESTRUCTIVE, f"risk could not be judged ({exc}); assumed worst")


class Executor:
    def __init__(
        self,
        registry: ToolRegistry,
        context: ToolContext,
        *,
        limits: ExecutorLimits,
        gate: Gate | None = None,
    ) -> None:
        self.registry = registry
        self.context = context
        self.gate: Gate = gate or ReadOnlyGate()
        self.limits = limits
        self._global = asyncio.Semaphore(self.limits.max_concurrency)
        self._per_key: dict[str, asyncio.Semaphore] = defaultdict(
            lambda: asyncio.Semaphore(self.limits.per_key_concurrency)
        )
        self._cancel_requested: asyncio.Event | None = None

    def cancel_batch(self) -> None:
        """Stop the running batch: unfinished calls end with a cancelled result."""
        if self._cancel_requested is not None:
            self._cancel_requested.set()

    def prepare(self, call: ToolCall) -> PreparedCall | ToolResult:
        tool = self.registry.get(call.name)
        if tool is None:
            known = ", ".join(self.registry.names())
            return ToolResult.error(f"Unknown tool {call.name!r}. Available tools: {known}.")
        if history.is_omitted_input(call.input):  # a tool that ignores unknown fields must not run
            return ToolResult.error(
                f"Not run: the input of this {tool.name} call was too long to keep "
                f"({call.input['omitted']}). Send it again, shorter or split into several calls.",
                Reason(kind="input_too_long", fields={"tool": tool.name}),
                not_run=True,
            )
        try:
            params = tool.Input.model_validate(call.input)
        except ValidationError as exc:
            return ToolResult.error(describe_validation_error(tool.name, exc))
        assessment = judge_risk(tool, params)
        return PreparedCall(
            call=call,
            tool=tool,
            params=params,
            risk=assessment.risk,
            risk_reason=assessment.reason,
            hosts=tool.hosts(params),
            summary=tool.summary(params),
        )

    async def run_batch(
        self, calls: Sequence[ToolCall], observer: BatchObserver | None = None
    ) -> list[ToolResult]:
        """Run every call; return one result per call, in call order."""
        observer = observer or BatchObserver()
        self._cancel_requested = asyncio.Event()
        results: list[ToolResult | None] = [None] * len(calls)
        tasks: dict[asyncio.Task[ToolResult], int] = {}
        for index, call in enumerate(calls):
            prepared = self.prepare(call)
            if isinstance(prepared, ToolResult):
                results[index] = prepared
                observer.call_finished(call, prepared)
                continue
            observer.call_prepared(prepared)
            task = asyncio.create_task(self._gated_run(prepared, observer))
            tasks[task] = index
        cancel_wait = asyncio.create_task(self._cancel_requested.wait())
        try:
            pending = set(tasks)
            while pending:
                done, pending = await asyncio.wait(
                    pending | {cancel_wait}, return_when=asyncio.FIRST_COMPLETED
                )
                pending.discard(cancel_wait)
                if cancel_wait in done:
                    break
        finally:
            cancel_wait.cancel()
            unfinished = [task for task in tasks if not task.done()]
            for task in unfinished:
                task.cancel()
            if unfinished:
                await asyncio.gather(*unfinished, return_exceptions=True)
            for task, index in tasks.items():
                results[index] = self._task_result(task)
                if task in unfinished:
                    observer.call_finished(calls[index], results[index])
            self._cancel_requested = None
        return [result for result in results if result is not None]

    @staticmethod
    def _task_result(task: asyncio.Task[ToolResult]) -> ToolResult:
        if task.cancelled():
            return ToolResult.error(CANCELLED_TEXT, cancelled=True)
        exc = task.exception()
        if exc is not None:  # _gated_run already turns failures into results
            return ToolResult.error(f"Internal error: {exc!r}")
        return task.result()

    async def _gated_run(self, prepared: PreparedCall, observer: BatchObserver) -> ToolResult:
        verdict = await self.gate.check(prepared)
        if not verdict.allowed:
            result = ToolResult.error(
                verdict.message, verdict.reason, gated=True, risk=prepared.risk.label
            )
            observer.call_finished(prepared.call, result)
            return result
        if verdict.params is not None:
            prepared.params = verdict.params
            prepared.summary = prepared.tool.summary(verdict.params)
        walled = prepared.risk == Risk.READ_ONLY and not verdict.human
        result: ToolResult | None = None
        try:
            result = await self._run(prepared, observer, walled=walled)
        finally:
            if verdict.settle is not None:
                verdict.settle(result)
        observer.call_finished(prepared.call, result)
        return result

    async def _run(
        self, prepared: PreparedCall, observer: BatchObserver, *, walled: bool
    ) -> ToolResult:
        """Run the call; a read no human approved gets a context that walls it on its hosts."""
        tool, params = prepared.tool, prepared.params
        context = dataclasses.replace(self.context, wall=True) if walled else self.context
        timeout = tool.timeout_s(params) or self.limits.default_timeout_s
        key = prepared.hosts[0] if len(prepared.hosts) == 1 else None
        started = time.perf_counter()
        async with self._global:
            if key is not None:
                await self._per_key[key].acquire()
            try:
                observer.call_started(prepared)
                async with asyncio.timeout(timeout):
                    result = await tool.run(params, context)
            except TimeoutError:
                result = ToolResult.error(
                    f"{tool.name} timed out after {timeout:g} s and was stopped; whatever it "
                    "started may be half done — check before retrying.",
                    timed_out=True,
                )
            except Exception as exc:
                log.exception("tool.crashed", tool=tool.name, call_id=prepared.call.id)
                result = ToolResult.error(
                    f"{tool.name} failed: {type(exc).__name__}: {exc}", crashed=True
                )
            finally:
                if key is not None:
                    self._per_key[key].release()
        result.meta.setdefault("duration_s", round(time.perf_counter() - started, 3))
        if prepared.hosts:
            result.meta.setdefault("hosts", prepared.hosts)
        return result
