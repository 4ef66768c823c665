"""On the simulator, a model no recipe covers: the plan reads its config.json from the head's HF
cache over SSH (sim/fakehost/model_configs.py writes the file the Hub holds) and takes vLLM's
parsers and the model's native context from it."""

from __future__ import annotations

import shlex
from typing import Any

import pytest

from agent.loop.scripted_client import ScriptedClient
from agent.replay.redrive import sim_runtime
from agent.safety.approvers.scripted import ScriptedApprover
from sim.scenario import Scenario, load_scenario
from tests.support.session_kit import text_turn, tool_turn

pytestmark = pytest.mark.slow


def _cached(model: str, size_gb: float) -> Scenario:
    raw = load_scenario("seed-pair").model_dump()
    for host in raw["hosts"].values():
        host["hf_cache"] = {model: {"size_gb": size_gb}}
    return Scenario.model_validate(raw)


async def _plan(scenario: Scenario, plan_input: dict[str, Any]) -> dict[str, Any]:
    turns = [
        tool_turn([("recon", "recon", {"hosts": "all"})]),
        tool_turn([("plan", "plan_deployment", plan_input)]),
        text_turn("done"),
    ]
    results: dict[str, Any] = {}

    class Keep:
        def on_event(self, event: Any) -> None:
            if event.type == "tool_result":
                results[event.id] = {"text": event.text, "data": event.data}

        def on_text(self, delta: str) -> None: ...

        def on_call_started(self, **kwargs: Any) -> None: ...

    approver = ScriptedApprover([], name="operator")
    async with sim_runtime(
        scenario,
        client=ScriptedClient(turns),
        approver_factory=lambda rules: approver,
        listeners=[Keep()],
    ) as runtime:
        await runtime.session.send("plan")
    return results["plan"]


async def test_gpt_oss_120b_on_one_spark_reads_its_parsers_and_context_from_config_json() -> None:
    model = "openai/gpt-oss-120b"
    plan = await _plan(_cached(model, 65.3), {"model": model, "hosts": ["spark-a"]})

    serve = next(s for s in plan["data"]["steps"] if s["id"].startswith("serve"))["actions"][0]
    words = shlex.split(serve)
    flags = {w: words[i + 1] for i, w in enumerate(words[:-1]) if w.startswith("--")}
    assert (flags["--tool-call-parser"], flags["--reasoning-parser"]) == ("openai", "openai_gptoss")
    assert flags["--max-model-len"] == "131072"
    assert "model_type gpt_oss (config.json cached on spark-a)" in plan["text"]
