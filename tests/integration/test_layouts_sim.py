"""Layouts on the simulated clusters beyond a pair: which nodes a plan uses and why, over real SSH.

Three Sparks in NVIDIA's ring, eight behind a switch, the seed grown to eight hosts, and two
8-GPU H100 nodes on InfiniBand, whose TP=8 × PP=2 plan is rolled out and served in the sim.
"""

from __future__ import annotations

from typing import Any

import pytest

from agent.loop.scripted_client import ScriptedClient
from agent.replay.redrive import sim_runtime
from agent.safety.approvers.scripted import ScriptedApprover
from sim.fleet import fleet
from sim.scenario import Scenario, load_scenario
from tests.support.session_kit import text_turn, tool_turn

pytestmark = pytest.mark.slow

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
PATIENT = {"check_attempts": 30, "check_interval_s": 0.3}


def sparks(count: int) -> list[str]:
    return [f"spark-{chr(ord('a') + i)}" for i in range(count)]


async def session(
    scenario: str | Scenario, turns: list[dict[str, Any]], approvals: int = 0
) -> dict[str, dict[str, Any]]:
    """Run the scripted turns on a fresh cluster; each tool result (content, error flag, data)
    by call id."""
    client = ScriptedClient([*turns, text_turn("done")])
    approver = ScriptedApprover([("approved", "")] * approvals, name="operator")
    results: dict[str, dict[str, Any]] = {}

    class Keep:
        def on_event(self, event: Any) -> None:
            if event.type == "tool_result":
                results[event.id] = {
                    "text": event.text,
                    "error": event.is_error,
                    "data": event.data,
                }

        def on_text(self, delta: str) -> None: ...

        def on_call_started(self, **kwargs: Any) -> None: ...

    async with sim_runtime(
        scenario, client=client, approver_factory=lambda rules: approver, listeners=[Keep()]
    ) as runtime:
        await runtime.session.send("deploy")
    return results


async def recon_and_plan(scenario: str | Scenario, plan_input: dict[str, Any]) -> dict[str, Any]:
    size = plan_input.get("model_size_gb", 119)
    return await session(
        scenario,
        [
            tool_turn([("recon", "recon", {"hosts": "all", "model_size_gb": size})]),
            tool_turn([("plan", "plan_deployment", {"model": MODEL, **plan_input})]),
        ],
    )


async def test_spark_trio_uses_two_of_three_nodes_and_says_why() -> None:
    results = await recon_and_plan("spark-trio", {"hosts": sparks(3), "model_size_gb": 119})
    recon, plan = results["recon"], results["plan"]
    assert "no IPv4 subnet is shared" not in recon["text"]  # a ring: every pair has a cable
    assert "it needs 2 of the 3 nodes (spark-a, spark-b)" in recon["text"]
    assert not plan["error"], plan["text"]
    goal = plan["data"]["plan"]["goal"]
    assert "TP=2, on spark-a, spark-b; endpoint spark-a:8000 (2 of 3 nodes:" in goal
    assert "a node gives at most ~105 GB (0.8 × its unified memory, within what CUDA" in goal
    assert "spark-a (head) and spark-b share the fabric subnet 192.168.0.0/24" in goal
    assert (
        "NCCL: the ring's requirement (NCCL 2.30 or later) does not apply: spark-a and spark-b "
        "talk over a subnet they share, not through the ring"
    ) in goal
    steps = plan["data"]["steps"]
    assert {s["host"] for s in steps} == {"spark-a", "spark-b"}
    head_run = next(s for s in steps if s["id"] == "container:spark-a")["actions"][0]
    worker_run = next(s for s in steps if s["id"] == "container:spark-b")["actions"][0]
    assert "-e NCCL_SOCKET_IFNAME=enp1s0f0np0" in head_run  # node 1's Port0 cable to node 2
    assert "-e NCCL_SOCKET_IFNAME=enp1s0f1np1" in worker_run  # node 2's Port1
    assert (
        "-e MASTER_ADDR=192.168.0.1" in worker_run and "-e VLLM_HOST_IP=192.168.0.3" in worker_run
    )


def _trio_with_nccl(version: str) -> Scenario:
    raw = load_scenario("spark-trio").model_dump()
    for host in raw["hosts"].values():
        for image in host["docker"]["images"]:
            image["nccl"] = version
    return Scenario.model_validate(raw)


async def _trio_ring_until_the_nccl_check(
    version: str,
) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
    """All three nodes of the ring asked for; the plan rolled out up to its NCCL check."""
    scenario = _trio_with_nccl(version)
    plan_input = {"model": MODEL, "hosts": sparks(3), "model_size_gb": 119, "nodes": 3}
    turns = [
        tool_turn([("recon", "recon", {"hosts": "all"})]),
        tool_turn([("plan", "plan_deployment", plan_input)]),
    ]
    planned = await session(scenario, turns)
    by_hash = {"plan_hash": planned["plan"]["data"]["plan_hash"]}
    ids = [s["id"] for s in planned["plan"]["data"]["steps"]]
    check = ids.index("nccl-check:spark-a") + 1
    rollout = [
        tool_turn([(f"s{n}", "rollout_step", {"step": n, **PATIENT})]) for n in range(1, check + 1)
    ]
    served = await session(
        scenario,
        [*turns, tool_turn([("propose", "propose_plan", by_hash)]), *rollout],
        approvals=20,
    )
    return planned["plan"], ids, served[f"s{check}"]


async def test_a_three_spark_ring_checks_the_images_nccl_before_any_engine() -> None:
    plan, ids, checked = await _trio_ring_until_the_nccl_check("2.28.9")
    engine = [n for n, i in enumerate(ids) if i.startswith(("container:", "rank:", "serve:"))]
    assert ids.index("nccl-check:spark-a") < min(engine), ids
    assert "NVIDIA's three-Spark ring needs NCCL 2.30 or later" in plan["text"]
    assert checked["error"], checked["text"]  # 2.28.9: the rollout stops here
    assert "its NCCL is 2.30 or later" in checked["text"]
    _, _, passed = await _trio_ring_until_the_nccl_check("2.30.3")
    assert not passed["error"], passed["text"]


async def test_spark_rack_8_uses_two_of_eight_on_the_switch() -> None:
    results = await recon_and_plan("spark-rack-8", {"hosts": sparks(8), "model_size_gb": 119})
    plan = results["plan"]
    assert not plan["error"], plan["text"]
    assert plan["data"]["layout"]["hosts"] == ["spark-a", "spark-b"]
    assert "(2 of 8 nodes:" in plan["data"]["plan"]["goal"]
    assert "spark-a (head) and spark-b share the fabric subnet 192.168.100.0/24" in plan["text"]
    asked = await recon_and_plan(
        "spark-rack-8", {"hosts": sparks(8), "model_size_gb": 119, "nodes": 4}
    )
    layout = asked["plan"]["data"]["layout"]
    assert layout["hosts"] == sparks(4) and layout["tensor_parallel"] == 4
    assert "4 of 8 nodes as asked" in layout["reason"]


async def test_the_seeds_memory_blocker_survives_at_eight_hosts() -> None:
    seed8 = fleet(load_scenario("seed-pair"), 8)
    results = await recon_and_plan(seed8, {"hosts": sparks(8), "model_size_gb": 119})
    recon, plan = results["recon"], results["plan"]
    assert (
        "[blocker] a ~119 GB model cannot start while vllm_node holds ~98 GB on spark-a: 29 GB "
        "available (needs ~60 GB per node split over 2 nodes)"
    ) in recon["text"]
    assert "tensor parallelism across 8 nodes" not in recon["text"]
    assert "it needs 2 of the 8 nodes (spark-a, spark-b)" in recon["text"]
    steps = plan["data"]["steps"]
    assert steps[0]["actions"] == ["docker stop vllm_node"] and steps[0]["host"] == "spark-a"
    assert {s["host"] for s in steps} == {"spark-a", "spark-b"}


async def test_h100_pair_holds_a_small_model_on_one_node_with_tp_8() -> None:
    results = await recon_and_plan("h100-pair", {"hosts": ["h100-a", "h100-b"]})
    recon, plan = results["recon"], results["plan"]
    assert "mlx5_0→ibp24s0 Up 400G" in recon["text"] and "→None" not in recon["text"]
    layout = plan["data"]["layout"]
    assert (layout["hosts"], layout["tensor_parallel"], layout["pipeline_parallel"]) == (
        ["h100-a"],
        8,
        1,
    )
    assert layout["reason"].startswith("1 of 2 nodes:")


async def test_h100_pair_serves_tp_8_by_pp_2_across_both_nodes() -> None:
    plan_input = {"model": MODEL, "hosts": ["h100-a", "h100-b"], "model_size_gb": 119, "nodes": 2}
    planned = await session(
        "h100-pair",
        [
            tool_turn([("recon", "recon", {"hosts": "all"})]),
            tool_turn([("plan", "plan_deployment", plan_input)]),
        ],
    )
    plan = planned["plan"]["data"]["plan"]
    assert "TP=8 × PP=2, on h100-a, h100-b" in plan["goal"]
    assert "TP = GPUs per node, PP = nodes" in plan["goal"]
    steps = planned["plan"]["data"]["steps"]
    env = next(s for s in steps if s["id"] == "container:h100-b")["actions"][0]
    assert "-e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_8,mlx5_9,mlx5_10" in env
    assert "ROCE" not in env and "GID_INDEX" not in env
    rollout = [
        tool_turn([(f"s{n}", "rollout_step", {"step": n, **PATIENT})])
        for n in range(1, len(plan["steps"]) + 1)
    ]
    check = {"host": "h100-a", "port": 8000, "model": MODEL, "concurrency": [1, 2], "runs": 1}
    served = await session(
        "h100-pair",
        [
            tool_turn([("recon", "recon", {"hosts": "all"})]),
            tool_turn([("plan", "plan_deployment", plan_input)]),
            tool_turn(
                [("propose", "propose_plan", {"plan_hash": planned["plan"]["data"]["plan_hash"]})]
            ),
            *rollout,
            tool_turn([("check", "endpoint_check", check)]),
        ],
        approvals=20,
    )
    for n in range(1, len(plan["steps"]) + 1):
        assert not served[f"s{n}"]["error"], served[f"s{n}"]["text"]
    done = [served[f"s{n}"]["text"] for n in range(1, len(plan["steps"]) + 1)]
    assert "rank 1; the rank's job log shows no error" in " ".join(done)  # ranks as jobs
    assert "lists Qwen/Qwen3.5-122B-A10B-FP8" in done[-1]
    assert not served["check"]["error"], served["check"]["text"]
    report = served["check"]["data"]["report"]
    assert report["source"] == "vllm bench serve"  # the engine's own, in its container
    assert [r["concurrency"] for r in report["rows"]] == [1, 2]
    assert report["rows"][0]["tok_s_per_user"] > 0


async def test_h100_nodes_nvlink_between_their_gpus_is_read_and_explains_tp_within() -> None:
    results = await recon_and_plan("h100-pair", {"hosts": ["h100-a", "h100-b"]})
    recon, plan = results["recon"], results["plan"]

    assert "8× NVIDIA H100 80GB HBM3 (NV18 between all 8 GPUs)" in recon["text"]
    assert plan["data"]["layout"]["reason"].endswith("within a node: NV18 between all 8 GPUs")
