"""The soak on the simulated pair, over real SSH: on nodes whose engines load two NCCL builds the
engine wedges under concurrent load, and the proof ends with the stall, its time and the
engine's log lines, its fingerprint showing both builds; on a healthy pair the soak holds."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sim.cluster import SimCluster
from sim.scenario import Scenario, load_scenario
from tools.base import ToolContext, ToolResult
from tools.deploy.rollout.state import SessionState
from tools.deploy.steps import DeployStep, StepCheck
from tools.endpoint_check import EndpointCheckInput, EndpointCheckTool
from tools.rollout_step import _nodes_disagree as nodes_disagree
from tools.ssh import Inventory, SSHPool

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
IMAGE = "nvcr.io/nvidia/vllm:25.11-py3"  # has Ray, so the two nodes form one engine
FABRIC = {"spark-a": "192.168.100.10", "spark-b": "192.168.100.11"}
ENGINE = (
    f"vllm serve {MODEL} -tp 2 --distributed-executor-backend ray "
    "--gpu-memory-utilization 0.8 --max-model-len 8192 --port 8000"
)
CONTAINERS = {"spark-a": "node-1", "spark-b": "node-2"}


async def run_on(pool: SSHPool, host: str, command: str) -> None:
    result = await pool.run(host, command, timeout=30)
    assert result.exit_status == 0, f"{command}\n{result.stdout}{result.stderr}"


async def serving(scenario: Scenario, tmp_path: Path) -> AsyncIterator[SSHPool]:
    """Both nodes in one Ray cluster, the engine serving on the head's port 8000."""
    async with SimCluster(scenario, tmp_path / "sim") as cluster:
        inventory = Inventory.load(cluster.write_inventory(tmp_path / "inv" / "inventory.yaml"))
        async with SSHPool(inventory) as pool:
            for nic in ("enp1s0f1np1", "enP2p1s0f1np1"):
                await run_on(pool, "spark-b", f"sudo ip link set {nic} up")
            for host, name in CONTAINERS.items():
                options = (
                    "--gpus all --network host --ipc host --device /dev/infiniband "
                    "-v ~/.cache/huggingface:/root/.cache/huggingface "
                    f"-e VLLM_HOST_IP={FABRIC[host]} -e NCCL_SOCKET_IFNAME=enp1s0f1np1 "
                    "-e HF_HUB_OFFLINE=1"
                )
                await run_on(pool, host, f"docker run -d --name {name} {options} {IMAGE} "
                                         "sleep infinity")  # fmt: skip
            head = FABRIC["spark-a"]
            await run_on(pool, "spark-a", "docker exec node-1 ray start --head --port 6379 "
                                          f"--node-ip-address {head}")  # fmt: skip
            await run_on(pool, "spark-b", f"docker exec node-2 ray start --address={head}:6379 "
                                          f"--node-ip-address {FABRIC['spark-b']}")  # fmt: skip
            await run_on(pool, "spark-a", f"docker exec -d node-1 bash -c '{ENGINE} "
                                          "> /var/log/vllm.log 2>&1'")  # fmt: skip
            for _ in range(100):
                health = await pool.run("spark-a", "curl -s -o /dev/null -w '%{http_code}' "
                                        "localhost:8000/health", timeout=10)  # fmt: skip
                if health.stdout.strip() == "200":
                    break
                await asyncio.sleep(0.2)
            else:
                raise AssertionError("the engine did not start")
            yield pool


def session_state() -> SessionState:
    """The session that started the engine: each node's container, the serve step on the head."""
    check = StepCheck(host="spark-a", command="true", description="-")
    steps = [
        DeployStep(
            kind="container",
            id=f"container:{host}",
            title="node",
            host=host,
            check=check,
            actions=[f"docker run -d --name {name} {IMAGE} sleep infinity"],
            rollback="-",
        )
        for host, name in CONTAINERS.items()
    ]
    steps.append(DeployStep(kind="serve", id="serve", title="serve", host="spark-a",
                            actions=[f"docker exec node-1 {ENGINE}"], check=check,
                            rollback="-"))  # fmt: skip
    state = SessionState()
    state.deployments["plan:test"] = steps
    return state


async def soak_check(pool: SSHPool, tmp_path: Path, soak_s: float, stall_s: float) -> ToolResult:
    ctx = ToolContext(spill_dir=tmp_path / "t" / "spill")
    params = EndpointCheckInput(host="spark-a", model=MODEL, concurrency=[1, 2], runs=1,
                                output_len=16, soak_s=soak_s, soak_concurrency=4,
                                stall_s=stall_s)  # fmt: skip
    return await EndpointCheckTool(session_state(), pool).run(params, ctx)


@pytest.fixture
async def skewed(tmp_path: Path) -> AsyncIterator[SSHPool]:
    async for pool in serving(load_scenario("nccl-build-skew"), tmp_path):
        yield pool


@pytest.fixture
async def healthy(tmp_path: Path) -> AsyncIterator[SSHPool]:
    async for pool in serving(load_scenario("healthy-pair"), tmp_path):
        yield pool


@pytest.mark.slow
async def test_the_soak_reports_the_stall_and_the_two_nccl_builds(skewed, tmp_path) -> None:
    before = await nodes_disagree(skewed, session_state().deployments["plan:test"])
    assert "warning: the nodes of one engine run different NCCL builds" in before
    assert "a7f420a1d5c3e9b8" in before and "the OS's (`libnccl2`)" in before
    result = await soak_check(skewed, tmp_path, soak_s=60.0, stall_s=2.0)
    assert not result.is_error, result.text
    last = result.text.splitlines()
    stall = next(line for line in last if line.startswith("soak:"))
    assert "STALL under c=4 at" in stall and "got no token for" in stall, result.text
    logged = [line for line in last if "spark-a engine log:" in line]
    assert any("Watchdog caught collective operation timeout" in line for line in logged), logged
    assert any("No available shared memory broadcast block" in line for line in logged), logged
    fingerprint = json.loads(Path(result.data["files"]["json"]).read_text())["fingerprint"]
    builds = {node: fingerprint["nodes"][node]["nccl_build"] for node in CONTAINERS}
    assert builds == {
        "spark-a": "2.28.9+cuda13.0 build-id a7f420a1d5c3e9b8",
        "spark-b": "2.28.9+cuda13.0 build-id c0db9360e4b1a7d2",
    }
    assert any("different NCCL builds" in said for said in fingerprint["nodes_disagree"])


@pytest.mark.slow
async def test_a_healthy_pair_holds_with_no_stall(healthy, tmp_path) -> None:
    result = await soak_check(healthy, tmp_path, soak_s=6.0, stall_s=5.0)
    assert not result.is_error, result.text
    soak = next(line for line in result.text.splitlines() if line.startswith("soak:"))
    assert soak.startswith("soak: held for ") and "under c=4, 0 stalls" in soak, result.text
    served = re.search(r"\((\d+) requests\)$", soak)
    assert served is not None and int(served.group(1)) >= 4, soak  # every stream finished some
    fingerprint = json.loads(Path(result.data["files"]["json"]).read_text())["fingerprint"]
    assert fingerprint["nodes_disagree"] == []
    assert await nodes_disagree(healthy, session_state().deployments["plan:test"]) == ""
