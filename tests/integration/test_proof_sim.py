"""endpoint_check on the simulated pair, over real SSH: the engine's own benchmark runs as a job
in the serving container, and an image too old to have one falls back to Scout's own streams,
saying so."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.world.model import WorldModel
from sim.cluster import SimCluster
from sim.fakehost.bench_serve import DETAILED
from sim.scenario import Scenario, load_scenario
from tools.base import ToolContext, ToolResult
from tools.deploy.proof.engine_bench import BENCH_JOB
from tools.deploy.rollout.state import SessionState
from tools.deploy.steps import DeployStep, StepCheck
from tools.endpoint_check import EndpointCheckInput, EndpointCheckTool
from tools.jobs.host import job_log
from tools.ssh import Inventory, SSHPool

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
REAL = (
    Path(__file__).parent.parent / "fixtures" / "bench" / "vllm_bench_serve_0.20.0_qwen3_8b_c1.json"
)
IMAGE = "nvcr.io/nvidia/vllm:25.11-py3"  # has Ray, so the two nodes form one engine
FABRIC = {"spark-a": "192.168.100.10", "spark-b": "192.168.100.11"}
ENGINE = (
    f"vllm serve {MODEL} -tp 2 --distributed-executor-backend ray "
    "--gpu-memory-utilization 0.8 --max-model-len 8192 --port 8000"
)
SERVE = f"docker exec node-1 {ENGINE}"


def seed_with_vllm(version: str) -> Scenario:
    """The seed pair, its 25.11 image holding `version` of vLLM."""
    raw = load_scenario("seed-pair").model_dump()
    for host in raw["hosts"].values():
        for image in host["docker"]["images"]:
            if image["tag"] == "25.11-py3":
                image["tools"]["vllm"] = version
    return Scenario.model_validate(raw)


async def run_on(pool: SSHPool, host: str, command: str) -> None:
    result = await pool.run(host, command, timeout=30)
    assert result.exit_status == 0, f"{command}\n{result.stdout}{result.stderr}"


async def serving(scenario: Scenario, tmp_path: Path) -> AsyncIterator[SSHPool]:
    """Both nodes in one Ray cluster, the engine serving on the head's port 8000."""
    async with SimCluster(scenario, tmp_path / "sim") as cluster:
        inventory = Inventory.load(cluster.write_inventory(tmp_path / "inv" / "inventory.yaml"))
        async with SSHPool(inventory) as pool:
            await run_on(pool, "spark-a", "docker rm -f vllm_node")
            await run_on(pool, "spark-b", "sudo ip link set enp1s0f1np1 up")
            await run_on(pool, "spark-b", "sudo ip link set enP2p1s0f1np1 up")
            for host, name in (("spark-a", "node-1"), ("spark-b", "node-2")):
                options = (
                    "--gpus all --network host --ipc host --device /dev/infiniband "
                    f"-v ~/.cache/huggingface:/root/.cache/huggingface "
                    f"-e VLLM_HOST_IP={FABRIC[host]} -e NCCL_SOCKET_IFNAME=enp1s0f1np1 "
                    "-e NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1 -e HF_HUB_OFFLINE=1"
                )
                await run_on(pool, host, f"docker run -d --name {name} {options} {IMAGE} "
                                         "sleep infinity")  # fmt: skip
            await run_on(pool, "spark-a", "docker exec node-1 ray start --head --port 6379 "
                                          f"--node-ip-address {FABRIC['spark-a']}")  # fmt: skip
            head = FABRIC["spark-a"]
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
                log = await pool.run("spark-a", "docker exec node-1 cat /var/log/vllm.log")
                raise AssertionError(f"the engine did not start: {log.stdout[-2000:]}")
            yield pool


def session_state() -> SessionState:
    """The session that started the engine: its serve step names the container and command."""
    state = SessionState()
    check = StepCheck(host="spark-a", command="true", description="-")
    serve = DeployStep(kind="serve", id="serve", title="serve", host="spark-a", actions=[SERVE],
                       check=check, rollback="-")  # fmt: skip
    state.deployments["plan:test"] = [serve]
    return state


async def check(pool: SSHPool, tmp_path: Path, **sweep: object) -> tuple[ToolResult, WorldModel]:
    world = WorldModel()
    ctx = ToolContext(spill_dir=tmp_path / "t" / "spill", world=world)
    asked = {"concurrency": [1, 4], "runs": 2} | sweep
    params = EndpointCheckInput(host="spark-a", model=MODEL, **asked)
    return await EndpointCheckTool(session_state(), pool).run(params, ctx), world


@pytest.fixture
async def recent(tmp_path: Path) -> AsyncIterator[SSHPool]:
    async for pool in serving(seed_with_vllm("0.11.0+nv25.11"), tmp_path):
        yield pool


@pytest.fixture
async def old(tmp_path: Path) -> AsyncIterator[SSHPool]:
    async for pool in serving(seed_with_vllm("0.8.5"), tmp_path):
        yield pool


@pytest.mark.slow
async def test_the_engines_own_benchmark_runs_in_its_container(recent, tmp_path) -> None:
    result, world = await check(recent, tmp_path, mode="full", output_len=32)
    assert not result.is_error, result.text
    report = result.data["report"]
    assert report["source"] == "vllm bench serve"
    assert [(r["concurrency"], r["runs"]) for r in report["rows"]] == [(1, 2), (4, 2)]
    assert all(r["ttft_ms"]["p90"] is not None and r["goodput_req_s"] is not None
               for r in report["rows"])  # fmt: skip
    printed = report["fingerprint"]
    assert printed["container"] == "node-1" and printed["serve_command"] == SERVE
    assert len(printed["benchmark_commands"]) == 4
    seeds = {c.split("--seed ")[1].split()[0] for c in printed["benchmark_commands"]}
    assert len(seeds) == 4  # no run reuses another's prompts
    assert all("--ignore-eos" in c and "--num-warmups" in c for c in printed["benchmark_commands"])
    assert all(r["requests"] == 1000 and r["ttft_ms"]["p99"] is not None for r in report["rows"])
    assert report["method"].startswith("full, 1,000 measured requests per level over 2 runs")
    saved = json.loads(Path(result.data["files"]["json"]).read_text())
    assert saved["rows"] == report["rows"]
    assert Path(result.data["files"]["chart"]).parent == tmp_path / "t"
    assert world.endpoints["spark-a:8000"].concurrency == 4
    # the sim's result file has the real one's fields (tests/fixtures/bench/, vLLM 0.20.0), the
    # percentiles asked for instead of the ones asked there, the per-request lists
    # --save-detailed keeps (vllm/benchmarks/serve.py), and nothing else
    written = await recent.run("spark-a", "docker exec node-1 cat /tmp/scout-bench/c4-r2.json")
    sim = set(json.loads(written.stdout))
    real = set(json.loads(REAL.read_text()))
    asked = re.compile(r"(mean|median|std|p\d+)_(ttft|tpot|itl|e2el)_ms")
    assert {k for k in real if not k.startswith("p95_")} <= sim
    assert all(k in real or asked.fullmatch(k) or k in DETAILED for k in sim), sim - real
    log = await job_log(recent, "spark-a", BENCH_JOB, lines=400, max_bytes=100_000, grep=None)
    assert log is not None  # the job's log holds every run's summary, as the real tool prints it
    assert log[1].count("============ Serving Benchmark Result ============") == 4
    at_four = re.findall(r"^Maximum request concurrency:\s+4\s*$", log[1], re.MULTILINE)
    assert len(at_four) == 4  # each run: the line before its progress, and its summary's row


@pytest.mark.slow
async def test_an_image_without_the_benchmark_falls_back_and_says_so(old, tmp_path) -> None:
    # HTTP streams take real time: one level, short outputs
    result, _ = await check(old, tmp_path, concurrency=[4], input_len=256, output_len=8)
    assert not result.is_error, result.text
    report = result.data["report"]
    assert report["source"] == (
        "Scout's own streams, not the engine's benchmark — the image has no `vllm bench serve`: "
        "vllm: error: argument subparser: invalid choice: 'bench' (choose from 'chat', "
        "'complete', 'serve')"
    )
    assert report["goodput_targets_ms"] == {}
    (row,) = report["rows"]
    assert (row["runs"], row["requests"]) == (2, 100) and row["ttft_ms"]["p99"] is None
    # every stream its own prompt: none comes from the engine's prefix cache, whose answer would
    # take a tenth of the engine's 0.48 s (one identical prompt to every stream did)
    assert row["ttft_ms"]["p50"] > 0.9 * 480, row["ttft_ms"]
    assert "proof: Scout's own streams, not the engine's benchmark" in result.text
    assert "each its own prompt" in report["method"]
