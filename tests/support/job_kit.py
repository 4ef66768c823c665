"""Jobs on the simulated cluster: a pair with nothing downloaded yet, the job tools behind an
executor, and a gate that approves while recording what it was asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.loop.calls import GateVerdict, PreparedCall, ToolCall
from agent.loop.executor import Executor
from agent.runtime.settings import Settings
from agent.safety.shell.judge import judge_shell
from sim.scenario import Scenario, load_scenario
from tools.base import ToolContext, ToolResult
from tools.job_logs import JobLogs
from tools.job_start import JobStart
from tools.job_status import JobStatus
from tools.job_stop import JobStop
from tools.job_wait import JobWait
from tools.registry import ToolRegistry
from tools.ssh import SSHPool

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
SMALL_MODEL = "Qwen/Qwen3-8B"
IMAGE = "nvcr.io/nvidia/vllm:26.06-py3"


def empty_pair(time_scale: float = 400.0) -> Scenario:
    """The seed pair before anything was fetched: the model only on the Hub, a newer NGC
    image only in the registry; long work `time_scale` times faster than real."""
    raw = load_scenario("seed-pair").model_dump()
    raw["name"] = "empty-pair"
    for host in raw["hosts"].values():
        newer = {**host["docker"]["images"][-1], "tag": "26.06-py3", "id": "b52d8f01e3c4"}
        newer.update(repository=IMAGE.split(":")[0], created="1 week ago", size="21.6GB")
        host["docker"]["pullable"] = [newer]
        host["hf_cache"] = {}
        host["hub"] = {
            MODEL: {"size_gb": 119, "files": 14},
            SMALL_MODEL: {"size_gb": 16, "files": 5},
        }
        host["rates"]["time_scale"] = time_scale
    return Scenario.model_validate(raw)


class ApprovingGate:
    """Approves every call and keeps (tool, risk) of each, as an operator saying yes would."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def check(self, prepared: PreparedCall) -> GateVerdict:
        self.seen.append((prepared.tool.name, prepared.risk.label))
        return GateVerdict(allowed=True)


class JobDesk:
    """The five job tools on one executor, over one pool; progress lines collected."""

    def __init__(self, pool: SSHPool, spill_dir: Path) -> None:
        self.progress: list[str] = []
        self.gate = ApprovingGate()
        tools = [
            JobStart(pool, judge_shell),
            JobStatus(pool),
            JobLogs(pool),
            JobWait(pool),
            JobStop(pool),
        ]
        context = ToolContext(spill_dir=spill_dir, progress=self.progress.append)
        self.executor = Executor(
            ToolRegistry(tools), context, limits=Settings().executor_limits(), gate=self.gate
        )
        self._ids = 0

    async def batch(self, *calls: tuple[str, dict[str, Any]]) -> list[ToolResult]:
        prepared = []
        for name, params in calls:
            self._ids += 1
            prepared.append(ToolCall(f"call-{self._ids}", name, params))
        return await self.executor.run_batch(prepared)

    async def call(self, tool: str, **params: Any) -> ToolResult:
        return (await self.batch((tool, params)))[0]


def job_facts(result: ToolResult) -> dict[tuple[str, str], dict[str, Any]]:
    return {(j["host"], j["name"]): j for j in result.data["jobs"]}
