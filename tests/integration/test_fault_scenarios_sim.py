"""One simulated scenario per fault a real host shows (sim/scenarios/, sources in each file and
sim/SOURCES.md): recon over real SSH gives the finding with its fix, and the plan answers it as a
careful operator would: it stops at a GPU it cannot use (lost, unreachable, missing, MIG on, Xid
errors since boot) and at a stale Ray cluster, with the finding's fix; it works around what it can
clear: the page cache is dropped and earlyoom stopped right before the engine starts, and a node
whose image is another build gets the head's.

The page cache of a Spark fails an engine's start as on real GB10s until it is dropped; the whole
rollout on that scenario shows the plan's step is what lets the engine start.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sim.cluster import SimCluster
from sim.scenario import Scenario, load_scenario
from tests.integration.test_layouts_sim import MODEL, PATIENT, recon_and_plan, session
from tests.support.job_kit import SMALL_MODEL, JobDesk, job_facts
from tests.support.session_kit import tool_turn
from tools.ssh import Inventory, SSHPool

pytestmark = pytest.mark.slow

H100 = {"hosts": ["h100-a", "h100-b"], "model_size_gb": 119, "nodes": 2}
SPARKS = {"hosts": ["spark-a", "spark-b"], "model_size_gb": 119}

STOPPED = ("The plan cannot succeed until", "Cannot plan this deployment yet")
# scenario, plan input, the finding's kind, where, and whether it stops the plan
FAULTS = [
    ("gpu-lost", H100, "gpu_lost", "GPU 3 (00000000:41:00.0) on h100-b reads ERR!", True),
    ("gpu-unreachable", H100, "gpu_unreachable", "the device handle for GPU1", True),
    ("gpu-missing", H100, "gpus_missing", "7 GPU(s) on h100-b but the PCI bus holds 8", True),
    ("gpu-lost", H100, "gpu_xid_errors", "Xid 119 (GSP RPC timeout)", True),
    ("mig-on", H100, "mig_enabled", "MIG is on for GPU 0 on h100-a (2 instances", True),
    ("earlyoom", SPARKS, "earlyoom_running", "earlyoom runs on spark-b", False),
    ("image-skew", SPARKS, "image_differs", "vllm:26.05-py3 is not the same image", False),
    ("page-cache", SPARKS, "page_cache_inflated", "spark-a: page cache holds", False),
    ("stale-ray", SPARKS, "ray_holds_gpus", "holds 2 of its 2 GPUs while no engine serves", True),
]  # fmt: skip


# scenario, the finding's kind, the step that answers it (id, its one action), and what the
# step's check wants
WORKAROUNDS = [
    ("page-cache", "page_cache_inflated", "drop-cache:spark-a",
     "sync; echo 3 | sudo tee /proc/sys/vm/drop_caches", "Cached:"),
    ("earlyoom", "earlyoom_running", "stop-earlyoom:spark-b", "sudo systemctl stop earlyoom",
     "earlyoom: not running"),
    ("image-skew", "image_differs", "image-copy:spark-b",
     "docker save nvcr.io/nvidia/vllm:26.05-py3 | ssh 192.168.100.11 docker load",
     "nvcr.io/nvidia/vllm:26.05-py3 a41c7e90d2b3"),
]  # fmt: skip


@pytest.mark.parametrize(("scenario", "plan", "kind", "said", "stops"), FAULTS)
async def test_recon_finds_the_fault_and_the_plan_answers_it(
    scenario: str, plan: dict[str, Any], kind: str, said: str, stops: bool
) -> None:
    results = await recon_and_plan(scenario, {**plan})
    recon, planned = results["recon"], results["plan"]

    assert said in recon["text"], recon["text"]
    found = [f for f in planned["data"].get("preflight", []) if f["kind"] == kind]
    if stops:
        assert planned["error"] and planned["text"].startswith(STOPPED)
        assert said in planned["text"] and found[0]["severity"] == "blocker"
    else:
        assert found or said in planned["text"], planned["text"]


@pytest.mark.parametrize(("scenario", "kind", "step_id", "action", "wants"), WORKAROUNDS)
async def test_the_plan_clears_what_it_can_before_the_engine_starts(
    scenario: str, kind: str, step_id: str, action: str, wants: str
) -> None:
    planned = (await recon_and_plan(scenario, {**SPARKS}))["plan"]

    assert not planned["error"], planned["text"]
    assert any(f["kind"] == kind for f in planned["data"]["preflight"])
    ids = [s["id"] for s in planned["data"]["steps"]]
    step = planned["data"]["steps"][ids.index(step_id)]
    assert step["actions"] == [action]
    assert wants in step["check"]["expect"].replace("\\", "")
    engine = [n for n, i in enumerate(ids) if i.startswith(("container:", "serve:", "ray-"))]
    assert engine and ids.index(step_id) < min(engine), ids


def _with_small_model(name: str) -> Scenario:
    raw = load_scenario(name).model_dump()
    raw["hosts"]["spark-a"]["hf_cache"][SMALL_MODEL] = {"size_gb": 16}
    raw["hosts"]["spark-a"]["rates"]["time_scale"] = 600
    return Scenario.model_validate(raw)


@pytest.fixture
async def page_cache(tmp_path: Path) -> AsyncIterator[JobDesk]:
    async with SimCluster(_with_small_model("page-cache"), tmp_path / "sim") as cluster:
        inventory = Inventory.load(cluster.write_inventory(tmp_path / "inv" / "inventory.yaml"))
        async with SSHPool(inventory) as pool:
            yield JobDesk(pool, tmp_path / "spill")


async def test_a_sparks_page_cache_fails_the_engine_start_until_it_is_dropped(
    page_cache: JobDesk,
) -> None:
    desk = page_cache
    container = (
        "docker run -d --name solo --gpus all -v ~/.cache/huggingface:/root/.cache/huggingface "
        "nvcr.io/nvidia/vllm:26.05-py3 sleep infinity"
    )
    serve = f"docker exec solo vllm serve {SMALL_MODEL} --port 8001 --gpu-memory-utilization 0.8"
    await desk.call("job_start", name="ctr", command=container, hosts=["spark-a"])
    await desk.call("job_wait", hosts=["spark-a"], names=["ctr"], timeout=60)

    await desk.call("job_start", name="cold", command=serve, hosts=["spark-a"])
    failed = await desk.call("job_wait", hosts=["spark-a"], names=["cold"], timeout=60)
    await desk.call(
        "job_start", name="drop", hosts=["spark-a"],
        command="echo 3 | sudo tee /proc/sys/vm/drop_caches",
    )  # fmt: skip
    await desk.call("job_wait", hosts=["spark-a"], names=["drop"], timeout=60)
    await desk.call("job_start", name="warm", command=serve, hosts=["spark-a"])
    started = await desk.call(
        "job_wait", hosts=["spark-a"], names=["warm"], pattern="Application startup complete",
        timeout=60,
    )  # fmt: skip
    await desk.call("job_stop", hosts=["spark-a"], names=["warm"])

    cold = job_facts(failed)[("spark-a", "cold")]["progress"]
    assert cold["error"].startswith("ValueError: Free memory on device (")
    assert "is less than desired GPU memory utilization (0.8" in cold["error"]
    assert job_facts(started)[("spark-a", "warm")]["progress"]["ready"]


# scenario, the title of the step that answers its fault, what that step's passing check says
ROLLED_OUT = [
    ("page-cache", "drop the page cache", "/proc/meminfo's Cached is under ~10 GB"),
    ("earlyoom", "stop earlyoom", "earlyoom no longer runs"),
    ("image-skew", "copy nvcr.io/nvidia/vllm:26.05-py3 from spark-a to spark-b",
     "nvcr.io/nvidia/vllm:26.05-py3 on spark-b is the head's (a41c7e90d2b3)"),
]  # fmt: skip


@pytest.mark.parametrize(("scenario", "title", "held"), ROLLED_OUT)
async def test_the_whole_rollout_serves_after_the_step_that_answers_the_fault(
    scenario: str, title: str, held: str
) -> None:
    plan_input = {"model": MODEL, **SPARKS}
    turns = [
        tool_turn([("recon", "recon", {"hosts": "all"})]),
        tool_turn([("plan", "plan_deployment", plan_input)]),
    ]
    planned = (await session(scenario, turns))["plan"]["data"]
    by_hash, count = {"plan_hash": planned["plan_hash"]}, len(planned["plan"]["steps"])
    rollout = [
        tool_turn([(f"s{n}", "rollout_step", {"step": n, **PATIENT})]) for n in range(1, count + 1)
    ]
    served = await session(
        scenario,
        [*turns, tool_turn([("propose", "propose_plan", by_hash)]), *rollout],
        approvals=20,
    )

    for n in range(1, count + 1):
        assert not served[f"s{n}"]["error"], served[f"s{n}"]["text"]
    titles = [s["title"] for s in planned["plan"]["steps"]]
    answered = next(n for n, t in enumerate(titles) if t.startswith(title))
    assert held in served[f"s{answered + 1}"]["text"]
    assert f"lists {MODEL}" in served[f"s{count}"]["text"]  # the engine started and serves
