"""Readiness timed on the simulated host, as sparkrun times it: port open, HTTP ready, first
streamed token, in that order, none before the engine was started."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sim.cluster import SimCluster
from sim.scenario import load_scenario
from tests.support.waiting import WAIT_S
from tools.deploy.proof.readiness import origin, serving, time_readiness
from tools.deploy.steps import DeployStep, StepCheck
from tools.ssh import Inventory, SSHPool

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
IMAGE = "nvcr.io/nvidia/vllm:25.11-py3"
ENGINE = f"vllm serve {MODEL} -tp 2 --distributed-executor-backend ray --max-model-len 8192"
FABRIC = {"spark-a": "192.168.100.10", "spark-b": "192.168.100.11"}


async def run_on(pool: SSHPool, host: str, command: str) -> None:
    result = await pool.run(host, command, timeout=30)
    assert result.exit_status == 0, f"{command}\n{result.stdout}{result.stderr}"


@pytest.mark.slow
async def test_readiness_is_timed_port_http_then_first_token(tmp_path: Path) -> None:
    scenario = load_scenario("healthy-pair")
    async with SimCluster(scenario, tmp_path / "sim") as cluster:
        inventory = Inventory.load(cluster.write_inventory(tmp_path / "inv" / "inventory.yaml"))
        async with SSHPool(inventory) as pool:
            for nic in ("enp1s0f1np1", "enP2p1s0f1np1"):
                await run_on(pool, "spark-b", f"sudo ip link set {nic} up")
            for host, name in (("spark-a", "node-1"), ("spark-b", "node-2")):
                await run_on(pool, host, f"docker run -d --name {name} --gpus all --network host "
                             "--ipc host -v ~/.cache/huggingface:/root/.cache/huggingface "
                             f"-e VLLM_HOST_IP={FABRIC[host]} -e NCCL_SOCKET_IFNAME=enp1s0f1np1 "
                             f"{IMAGE} sleep infinity")  # fmt: skip
            head = FABRIC["spark-a"]
            await run_on(pool, "spark-a", "docker exec node-1 ray start --head --port 6379 "
                                          f"--node-ip-address {head}")  # fmt: skip
            await run_on(pool, "spark-b", f"docker exec node-2 ray start --address={head}:6379 "
                                          f"--node-ip-address {FABRIC['spark-b']}")  # fmt: skip
            serve = serving(step := DeployStep(
                kind="serve", id="serve", title="serve", host="spark-a", rollback="-",
                actions=[f"docker exec node-1 {ENGINE}"],
                check=StepCheck(host="spark-a", command="true", description="-"),
            ))  # fmt: skip
            assert serve is not None
            readiness = origin(serve)
            timing = asyncio.create_task(time_readiness(pool, step.host, serve, readiness))
            await asyncio.sleep(1.5)
            await run_on(pool, "spark-a", f"docker exec -d node-1 bash -c '{ENGINE} > /tmp/v.log'")
            await asyncio.wait_for(timing, WAIT_S)
    marks = [readiness.port_open_s, readiness.http_ready_s, readiness.first_token_s]
    assert all(m is not None for m in marks), readiness
    assert marks == sorted(marks) and marks[0] > 0, readiness  # nothing listened at first
