"""Deploying and serving a model on the simulated cluster, over real SSH, the way Scout would."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import asyncssh
import httpx
import pytest

from sim.cluster import SimCluster
from sim.engine.endpoints import Endpoints
from tests.support.sim_client import client_options
from tests.support.waiting import until

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
# the NGC 26.05 image has no Ray (docs/sources.md §2.3); 25.11, which NVIDIA's earlier guide starts
# Ray in, has it
IMAGE = "nvcr.io/nvidia/vllm:25.11-py3"
FABRIC = {"spark-a": "192.168.100.10", "spark-b": "192.168.100.11"}
SERVE = f"vllm serve {MODEL} -tp 2 --distributed-executor-backend ray --gpu-memory-utilization 0.8"


def run_options(ip: str, ifname: str = "enp1s0f1np1", rdma: bool = True, env: str = "") -> str:
    device = "--device /dev/infiniband " if rdma else ""
    return (
        f"--gpus all --network host --ipc host --shm-size 10.24g --ulimit memlock=-1 {device}"
        "-v ~/.cache/huggingface:/root/.cache/huggingface "
        f"-e VLLM_HOST_IP={ip} -e NCCL_SOCKET_IFNAME={ifname} -e GLOO_SOCKET_IFNAME={ifname} "
        f"-e NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1 -e NCCL_DEBUG=INFO -e HF_HUB_OFFLINE=1{env}"
    )


@dataclass
class Pair:
    cluster: SimCluster
    head: asyncssh.SSHClientConnection
    worker: asyncssh.SSHClientConnection

    async def run(self, on: str, command: str) -> asyncssh.SSHCompletedProcess:
        conn = self.head if on == "head" else self.worker
        return await conn.run(command, stdin=asyncssh.DEVNULL, timeout=30)

    async def ok(self, on: str, command: str) -> str:
        result = await self.run(on, command)
        assert result.exit_status == 0, f"{command}\n{result.stdout}{result.stderr}"
        return str(result.stdout)

    async def prepare(self, ifname: str = "enp1s0f1np1", rdma: bool = True, env: str = "") -> None:
        """Free the head, bring the worker's link up, start one vLLM container per node."""
        await self.ok("head", "docker rm -f vllm_node || true")
        await self.ok("worker", f"sudo ip link set {ifname} up")
        await self.ok("worker", "sudo ip link set enP2p1s0f1np1 up")
        for on, ip, name in (
            ("head", FABRIC["spark-a"], "node-1"),
            ("worker", FABRIC["spark-b"], "node-2"),
        ):
            await self.ok(
                on,
                f"docker run -d --name {name} {run_options(ip, ifname, rdma, env)} {IMAGE} "
                "sleep infinity",
            )

    async def ray_cluster(self) -> None:
        await self.ok(
            "head",
            f"docker exec node-1 ray start --head --port 6379 "
            f"--node-ip-address {FABRIC['spark-a']}",
        )
        await self.ok(
            "worker",
            f"docker exec node-2 ray start --address={FABRIC['spark-a']}:6379 "
            f"--node-ip-address {FABRIC['spark-b']}",
        )


async def open_pair(scenario: str, tmp_path: Path) -> AsyncIterator[Pair]:
    async with SimCluster(scenario, tmp_path / "sim") as cluster:
        options = client_options(cluster)
        async with asyncssh.connect("127.0.0.1", cluster.head_port, **options) as head:
            worker = await asyncssh.connect("192.168.200.13", 22, tunnel=head, **options)
            async with worker:
                yield Pair(cluster, head, worker)


@pytest.fixture
async def seed(tmp_path: Path) -> AsyncIterator[Pair]:
    async for pair in open_pair("seed-pair", tmp_path):
        yield pair


# `docker exec -d` output reaches no log (docker logs shows PID 1 only), so the engine writes to a
# file in the container, read there, as NVIDIA-based two-Spark setups do (`tail /var/log/vllm.log`).
ENGINE_LOG = "/var/log/vllm.log"
SERVE_LOGGED = f"bash -c '{SERVE} > {ENGINE_LOG} 2>&1'"


async def wait_for_log(pair: Pair, container: str, text: str) -> str:
    """The engine log of `container` once it says `text`."""

    async def logged() -> str:
        logs = (await pair.run("head", f"docker exec {container} cat {ENGINE_LOG}")).stdout
        return logs if text in logs else ""

    return await until(logged, f"{text!r} in {container}'s {ENGINE_LOG}")


async def stream_rate(base_url: str, max_tokens: int = 24) -> tuple[float, float, str]:
    """Time to first token, tokens/s after it, and the text of one streamed chat completion."""
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Say something."}],
        "stream": True,
        "max_tokens": max_tokens,
        "stream_options": {"include_usage": True},
    }
    pieces, stamps, usage = [], [], None
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        start = time.monotonic()
        async with client.stream("POST", "/v1/chat/completions", json=body) as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                chunk = json.loads(line.removeprefix("data: "))
                usage = chunk.get("usage") or usage
                content = chunk["choices"][0]["delta"].get("content") if chunk["choices"] else None
                if content:
                    pieces.append(content)
                    stamps.append(time.monotonic())
    assert usage is not None and usage["completion_tokens"] == len(pieces) == max_tokens
    rate = (len(stamps) - 1) / (stamps[-1] - stamps[0])
    return stamps[0] - start, rate, "".join(pieces)


@pytest.mark.slow
async def test_happy_path_serves_the_model_through_an_ssh_forward(seed: Pair) -> None:
    await seed.prepare()
    await seed.ray_cluster()
    status = await seed.ok("head", "docker exec node-1 ray status")
    assert status.count(" 1 node_") == 2 and " 0.0/2.0 GPU" in status
    await seed.ok("head", f"docker exec -d node-1 {SERVE_LOGGED}")
    logs = await wait_for_log(seed, "node-1", "Application startup complete.")
    assert "Uvicorn running on http://0.0.0.0:8000" in logs
    assert "Application startup complete." not in await seed.ok("head", "docker logs node-1")
    assert (
        "NCCL INFO NET/IB : Using [0]rocep1s0f1:1/RoCE [1]roceP2p1s0f1:1/RoCE [RO]; "
        "OOB enp1s0f1np1:192.168.100.10<0>" in logs
    )
    assert (await seed.ok("head", "curl -s localhost:8000/health -w '%{http_code}'")) == "200"
    assert " 2.0/2.0 GPU" in await seed.ok("head", "docker exec node-1 ray status")
    stats = json.loads(await seed.ok("head", "docker stats --no-stream --format '{{json .}}'"))
    assert stats["Name"] == "node-1" and stats["MemUsage"].endswith("GiB / 121.7GiB")

    listener = await seed.head.forward_local_port("127.0.0.1", 0, "localhost", 8000)
    try:
        base = f"http://127.0.0.1:{listener.get_port()}"
        async with httpx.AsyncClient(base_url=base) as client:
            assert (await client.get("/health")).status_code == 200
            models = (await client.get("/v1/models")).json()
            assert [m["id"] for m in models["data"]] == [MODEL]
        ttft, rate, text = await stream_rate(base)
        # What the user sees, whatever the machine's speed: tokens stream one by one (counted
        # in stream_rate) at a positive rate. The configured rate itself is a benchmark matter.
        assert ttft > 0 and rate > 0
        assert text.startswith("The two DGX Spark nodes")
    finally:
        listener.close()

    await seed.ok("head", "docker stop node-1")
    refused = await seed.run("head", "curl localhost:8000/health")
    assert refused.exit_status == 7 and "Failed to connect to localhost port 8000" in refused.stderr


async def test_serving_fails_while_the_old_container_holds_the_memory(seed: Pair) -> None:
    await seed.ok(
        "head", f"docker run -d --name solo {run_options(FABRIC['spark-a'])} {IMAGE} sleep infinity"
    )
    busy = await seed.run(
        "head", f"docker exec solo vllm serve {MODEL} --gpu-memory-utilization 0.8"
    )
    assert busy.exit_status == 1
    assert "address already in use" in busy.stderr
    low = await seed.run(
        "head", f"docker exec solo vllm serve {MODEL} --port 8001 --gpu-memory-utilization 0.8"
    )
    assert low.exit_status == 1
    assert "ValueError: Free memory on device" in low.stderr
    assert "less than desired GPU memory utilization (0.8, 97.35 GiB)" in low.stderr


@pytest.mark.slow
async def test_worker_that_cannot_reach_the_head_never_joins(seed: Pair) -> None:
    await seed.ok("head", "docker stop vllm_node")
    for on, ip, name in (
        ("head", FABRIC["spark-a"], "node-1"),
        ("worker", FABRIC["spark-b"], "node-2"),
    ):
        await seed.ok(on, f"docker run -d --name {name} {run_options(ip)} {IMAGE} sleep infinity")
    await seed.ok(
        "head",
        f"docker exec node-1 ray start --head --port 6379 --node-ip-address {FABRIC['spark-a']}",
    )
    join = await seed.run(
        "worker", f"docker exec node-2 ray start --address={FABRIC['spark-a']}:6379"
    )
    assert join.exit_status == 1
    assert "Unable to connect to GCS (ray head) at 192.168.100.10:6379" in join.stderr
    assert (await seed.ok("head", "docker exec node-1 ray status")).count(" 1 node_") == 1
    serve = await seed.run("head", f"docker exec node-1 {SERVE}")
    assert serve.exit_status == 1
    assert "Waiting for creating a placement group" in serve.stdout
    assert "ValueError: Cannot provide a placement group" in serve.stderr


@pytest.mark.slow
async def test_link_that_stays_down_keeps_the_worker_out(tmp_path: Path) -> None:
    async for pair in open_pair("roce-unfixable", tmp_path):
        await pair.prepare()
        link = await pair.ok("worker", "ip -br link show enp1s0f1np1")
        assert "NO-CARRIER" in link or "DOWN" in link
        await pair.ok(
            "head", f"docker exec node-1 ray start --head --node-ip-address {FABRIC['spark-a']}"
        )
        join = await pair.run(
            "worker", f"docker exec node-2 ray start --address={FABRIC['spark-a']}:6379"
        )
        assert join.exit_status == 1 and "Unable to connect to GCS" in join.stderr


async def test_model_missing_on_the_worker(tmp_path: Path) -> None:
    async for pair in open_pair("seed-pair-no-model", tmp_path):
        await pair.prepare()
        await pair.ray_cluster()
        serve = await pair.run("head", f"docker exec node-1 {SERVE}")
        assert serve.exit_status == 1
        assert f"ip=192.168.100.11) ERROR: model {MODEL} not found in cache" in serve.stderr
        assert "LocalEntryNotFoundError" in serve.stderr


async def test_wrong_socket_interface_stops_nccl(tmp_path: Path) -> None:
    async for pair in open_pair("wrong-interface", tmp_path):
        await pair.prepare()
        await pair.ray_cluster()
        serve = await pair.run("head", f"docker exec node-1 {SERVE}")
        assert serve.exit_status == 1
        assert "NCCL WARN Bootstrap : no socket interface found" in serve.stderr
        refused = await pair.run("head", "curl -s localhost:8000/health")
        assert refused.exit_status == 7


@pytest.mark.slow
async def test_without_rdma_devices_nccl_falls_back_to_sockets(seed: Pair) -> None:
    await seed.prepare(rdma=False)
    await seed.ray_cluster()
    await seed.ok("head", f"docker exec -d node-1 {SERVE_LOGGED}")
    logs = await wait_for_log(seed, "node-1", "Application startup complete.")
    assert "NCCL INFO NET/Socket : Using [0]enp1s0f1np1:192.168.100.10<0>" in logs
    assert "NET/IB : Using" not in logs
    listener = await seed.head.forward_local_port("127.0.0.1", 0, "192.168.100.10", 8000)
    try:
        _ttft, rate, text = await stream_rate(f"http://127.0.0.1:{listener.get_port()}", 6)
    finally:
        listener.close()
    assert rate > 0 and text


def serve_record(cluster: SimCluster) -> dict[str, object]:
    return cluster.host_state("spark-a")["docker"]["containers"]["node-1"].get("serve") or {}


async def test_the_engine_says_it_runs_only_once_its_port_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """uvicorn logs "Application startup complete." once it listens; a client that acts on the
    line must find the server. The simulator is held from serving the engine until the engine
    has recorded itself, and the log may not say it runs before that."""
    publish = asyncio.Event()
    refresh = Endpoints.refresh

    async def held(self: Endpoints) -> None:
        await publish.wait()
        await refresh(self)

    monkeypatch.setattr(Endpoints, "refresh", held)
    async for seed in open_pair("seed-pair", tmp_path):
        await seed.prepare()
        await seed.ray_cluster()
        await seed.ok("head", f"docker exec -d node-1 {SERVE_LOGGED}")
        await until(partial(serve_record, seed.cluster), "the engine to record that it serves")
        logs = await seed.ok("head", f"docker exec node-1 cat {ENGINE_LOG}")
        assert "Loading safetensors checkpoint shards: 100%" in logs
        assert "Application startup complete." not in logs and "Uvicorn running" not in logs
        publish.set()
        await wait_for_log(seed, "node-1", "Application startup complete.")
        health = await seed.ok("head", "curl -s localhost:8000/health -w '%{http_code}'")
        assert health == "200"


@pytest.mark.slow
async def test_curl_answers_a_completion_and_pkill_reaches_only_this_host(seed: Pair) -> None:
    await seed.prepare()
    await seed.ray_cluster()
    await seed.ok("head", f"docker exec -d node-1 {SERVE_LOGGED}")
    await wait_for_log(seed, "node-1", "Application startup complete.")
    body = json.dumps({"model": MODEL, "prompt": "Hello", "max_tokens": 4})
    answer = json.loads(
        await seed.ok(
            "head",
            "curl -s localhost:8000/v1/completions -H 'Content-Type: application/json' "
            f"-d '{body}'",
        )
    )
    assert (
        answer["choices"][0]["text"] == "The two DGX Spark"
        and answer["usage"]["completion_tokens"] == 4
    )
    await seed.ok("worker", "docker exec -d node-2 sleep infinity")
    assert (await seed.run("head", "pkill -TERM -f 'exec -d node-2 [s]leep'")).exit_status == 1
    assert (await seed.run("worker", "pkill -TERM -f 'exec -d node-2 [s]leep'")).exit_status == 0
    gone = await seed.run("worker", "pkill -TERM -f '[s]cout-run-1234'")
    assert gone.exit_status == 1 and gone.stderr == ""


async def test_exec_detached_output_is_not_in_docker_logs(seed: Pair) -> None:
    """docker logs shows the container's own command (PID 1) only; `exec -d` output is lost
    unless the command sends it to a file, which `tail` in the container then reads."""
    await seed.prepare()
    await seed.ok("head", "docker exec -d node-1 ray start --head --port 6379")
    await seed.ok("head", f"docker exec -d node-1 bash -c 'ray status >> {ENGINE_LOG}'")
    logs = await seed.ok("head", "docker logs node-1")
    assert "Ray runtime started" not in logs and "Node status" not in logs

    async def ray_status_logged() -> bool:
        tail = await seed.ok("head", f"docker exec node-1 tail -n 30 {ENGINE_LOG}")
        return "Node status" in tail

    await until(ray_status_logged, f"ray status's output in {ENGINE_LOG}")
    missing = await seed.run("head", "docker exec node-1 tail /var/log/none.log")
    assert missing.exit_status == 1
    assert "tail: cannot open '/var/log/none.log' for reading" in missing.stderr


async def test_with_nccl_net_ib_a_missing_rdma_path_stops_the_engine(seed: Pair) -> None:
    await seed.prepare(rdma=False, env=" -e NCCL_NET=IB")
    await seed.ray_cluster()
    serve = await seed.run("head", f"docker exec node-1 {SERVE}")
    assert serve.exit_status == 1
    assert "NCCL WARN Error: network IB not found." in serve.stderr
    assert "NET/Socket" not in serve.stdout + serve.stderr


@pytest.mark.slow
async def test_a_flag_the_images_vllm_does_not_know_stops_it_at_the_parser(seed: Pair) -> None:
    await seed.prepare()  # IMAGE: NGC 25.11, vLLM 0.11.0 (--task still known there)
    serve = await seed.run("head", f"docker exec node-1 {SERVE} --no-such-flag 3")
    assert serve.exit_status == 2
    assert serve.stderr.splitlines()[-1] == (
        "vllm serve: error: unrecognized arguments: --no-such-flag 3"
    )
    older = await seed.run("head", f"docker exec node-1 {SERVE} --task embed")
    assert "unrecognized arguments" not in older.stderr
