"""The plan's proof soaks 30 minutes on real hosts and not on the simulator (issue 38: "default in
the plan: 30 minutes on real hosts").

A session knows its hosts are the simulator's from the scenario it was opened with, or from the
`simulator` label the simulator puts on every host of the inventories it writes. Hosts without
either are real: here the simulator's own hosts, the label taken off, stand in for them (the
plan is computed over real SSH all the same).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from agent.loop.scripted_client import ScriptedClient
from agent.runtime.builder import open_runtime
from agent.runtime.settings import Settings
from agent.safety.approvers.scripted import ScriptedApprover
from sim.cluster import SimCluster
from tests.support.session_kit import text_turn, tool_turn
from tools.deploy.proof.call import EndpointCheckInput

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
PLAN = {"model": MODEL, "hosts": ["spark-a", "spark-b"], "model_size_gb": 119}
SOAK = "soak=1800s c=16"


def unlabelled(path: Path) -> Path:
    """The simulator's inventory as an operator's would read: no `simulator` label."""
    raw = yaml.safe_load(path.read_text())
    for host in raw["hosts"].values():
        host.pop("labels")
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


async def plan_and_proof(inventory: Path, tmp_path: Path) -> tuple[dict[str, Any], list[str]]:
    """recon and plan_deployment in a session on `inventory`: the plan's data, and the command
    endpoint_check declares for a call that names no soak."""
    client = ScriptedClient([
        tool_turn([("recon", "recon", {"hosts": "all", "model_size_gb": 119})]),
        tool_turn([("plan", "plan_deployment", PLAN)]),
        text_turn("done"),
    ])  # fmt: skip
    settings = Settings(
        model="scripted", inventory=inventory, transcripts_dir=tmp_path / "t",
        log_file=tmp_path / "scout.log", deployments_dir=tmp_path / "d",
    )  # fmt: skip
    approver = ScriptedApprover([], name="operator")
    runtime = await open_runtime(settings, client=client, approver_factory=lambda r: approver)
    plans: list[dict[str, Any]] = []

    class Keep:
        def on_event(self, event: Any) -> None:
            if event.type == "tool_result" and event.name == "plan_deployment":
                assert not event.is_error, event.text
                plans.append(event.data["plan"])

        def on_text(self, delta: str) -> None: ...

        def on_call_started(self, **kwargs: Any) -> None: ...

    runtime.session.recorder.listeners.append(Keep())
    try:
        await runtime.session.send("deploy")
        tool = runtime.session.executor.registry.get("endpoint_check")
        assert tool is not None
        call = EndpointCheckInput(host="spark-a", port=8000, model=MODEL)
        declared = [command for _host, command in tool.commands(call) or []]
    finally:
        await runtime.aclose()
    return plans[0], declared


@pytest.mark.slow
async def test_on_real_hosts_the_plan_and_the_call_soak_thirty_minutes(tmp_path: Path) -> None:
    async with SimCluster("seed-pair", tmp_path / "sim") as sim:
        inventory = unlabelled(sim.write_inventory(tmp_path / "inv" / "inventory.yaml"))
        plan, declared = await plan_and_proof(inventory, tmp_path)
    proof = plan["proof"]
    assert SOAK in proof["actions"][0] and "then a soak of 30 min" in proof["expected_downtime"]
    assert declared == proof["actions"]  # the approved plan covers the call as it will run


@pytest.mark.slow
async def test_on_the_simulator_neither_soaks(tmp_path: Path) -> None:
    async with SimCluster("seed-pair", tmp_path / "sim") as sim:
        inventory = sim.write_inventory(tmp_path / "inv" / "inventory.yaml")
        plan, declared = await plan_and_proof(inventory, tmp_path)
    assert "soak=" not in plan["proof"]["actions"][0]
    assert declared == plan["proof"]["actions"]
