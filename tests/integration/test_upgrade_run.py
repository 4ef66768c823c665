"""`scout upgrade` on the simulated pair: every failed upgrade ends with the recorded deployment
serving and proven again, its rollback run on the plan's one approval; a good one is recorded.

The deployment upgraded is the recorded fresh-pair story's (its record built from the committed
transcript, its engine started on the upgrade-pair scenario by the record's own steps). The
upgrade runs as `scout upgrade` does (faces/upgrade_face.upgrade) with an approver that counts
what it is asked: one decision, the plan, approved with its steps.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent.daytwo.status import deployment_status
from agent.daytwo.upgrade_plan import ENGINE_KINDS, UpgradeRequest
from agent.faces.upgrade_face import upgrade
from agent.runtime.deployment_record import (
    DeploymentRecord,
    RecordStore,
    build_record,
    read_transcript_events,
)
from agent.runtime.settings import Settings
from agent.safety.approvers.scripted import ScriptedApprover
from agent.safety.gate import PLAN_APPROVAL
from sim.cluster import SimCluster
from tools.deploy.steps import DeployStep
from tools.jobs.host import start_job
from tools.jobs.waiting import wait_for_jobs
from tools.ssh import Inventory, SSHPool

pytestmark = pytest.mark.slow

STORY = Path(__file__).parents[2] / "transcripts" / "fresh-pair-deploy.jsonl"
WITH_STEPS = {"kind": "approved", "message": "", "approve_steps": True}
OLD_IMAGE = "nvcr.io/nvidia/vllm:26.05-py3"
STALL_WAIT_S = 20.0

FAILED_UPGRADES = {
    # an amd64-only build: its container exits at once with `exec format error`
    "image-cannot-start": (UpgradeRequest(image="scout-sim/vllm:amd64-only"), "scout-vllm is Up"),
    # a flag the image's vLLM (0.19) does not know: argparse stops the engine
    "flag-refused": (UpgradeRequest(add_flags=["--task", "generate"]), "unrecognized arguments"),
    # the new build cannot read the checkpoint: safetensors' error, the engine exits
    "weights-fail-to-load": (UpgradeRequest(image="scout-sim/vllm:bad-loader"), "SafetensorError"),
    # it starts, answers /health and /v1/models, and generates only "!"
    "proof-fails": (UpgradeRequest(image="scout-sim/vllm:gibberish"), "the proof"),
    # start-up stops after NCCL's init and never serves
    "stall-after-start": (UpgradeRequest(image="scout-sim/vllm:nccl-stall"), "stalled"),
}


def recorded_story() -> DeploymentRecord:
    record = build_record(read_transcript_events(STORY), STORY)
    assert record is not None and record.steps
    return record


async def start_recorded(settings: Settings, record: DeploymentRecord) -> None:
    """Start the record's engine by its own steps, as its rollout did, and see it serve."""
    assert settings.inventory is not None
    async with SSHPool(Inventory.load(settings.inventory)) as pool:
        for step in (DeployStep.model_validate(s) for s in record.steps):
            if step.kind not in ENGINE_KINDS:
                continue
            if step.job is None:
                for action in step.actions:
                    done = await pool.run(step.host, action)
                    assert done.exit_status == 0, done.stderr
                continue
            started = await start_job(pool, step.host, step.job, step.actions[0])
            assert not started.exists
            if step.wait:
                waited = await wait_for_jobs(
                    pool, {step.host: [step.job]}, pattern=step.ready, first=True,
                    timeout_s=120, report=lambda line: None,
                )  # fmt: skip
                assert waited.reason != "timeout"
        status = await deployment_status(record, pool)
        assert status.state == "serving", status.reasons


@pytest.fixture
def settings(cluster: SimCluster, tmp_path: Path) -> Settings:
    return Settings(
        inventory=cluster.write_inventory(tmp_path / "day2" / "inventory.yaml"),
        transcripts_dir=tmp_path / "day2" / "transcripts",
        log_file=tmp_path / "day2" / "scout.log",
        deployments_dir=tmp_path / "day2" / "deployments",
    )


def plan_approvals(transcript: Path) -> list[str]:
    """The calls the plan's approval covered, as the transcript says: `rollback step 2 as …`."""
    said = []
    for line in transcript.read_text().splitlines():
        event = json.loads(line)
        if event.get("decided_by") == PLAN_APPROVAL:
            said.append(event["message"])
    return said


@pytest.mark.timeout(600)
@pytest.mark.parametrize("cluster", ["upgrade-pair"], indirect=True)
@pytest.mark.parametrize("kind", sorted(FAILED_UPGRADES))
async def test_a_failed_upgrade_rolls_back_on_the_plans_grant(cluster, settings, kind):
    record = recorded_story()
    RecordStore(settings.deployments_dir).save(record)
    await start_recorded(settings, record)
    request, why = FAILED_UPGRADES[kind]

    operator = ScriptedApprover([WITH_STEPS], name="operator")
    run = await upgrade(
        settings, record, request, soak_s=1, wait_s=STALL_WAIT_S,
        approver_factory=lambda rules: operator,
    )  # fmt: skip

    assert run.outcome == "rolled back", run.detail
    assert why in run.detail and run.detail.endswith(f"rolled back to {record.id}, proven again")
    assert [r.tool for r in operator.seen] == ["propose_plan"]  # one decision: the plan
    [path] = list(settings.transcripts_dir.glob("*.jsonl"))
    covered = plan_approvals(path)
    assert any(c.startswith("rollback step") for c in covered), covered
    engine = [s for s in record.steps if s["kind"] in ENGINE_KINDS]
    last = len(record.started) + len(engine) + 1  # clear each host, the engine, its proof
    assert covered[-1] == f"rollback step {last} as approved with the plan"
    # the recorded deployment serves again, as proven, and its record is unchanged
    assert settings.inventory is not None
    async with SSHPool(Inventory.load(settings.inventory)) as pool:
        status = await deployment_status(record, pool)
    assert (status.state, status.reasons) == ("serving", [])
    [kept], _ = RecordStore(settings.deployments_dir).load()
    assert kept.fingerprint == record.fingerprint and kept.steps == record.steps


@pytest.mark.timeout(600)
@pytest.mark.parametrize("cluster", ["upgrade-pair"], indirect=True)
async def test_a_good_upgrade_is_proven_and_recorded(cluster, settings):
    record = recorded_story()
    RecordStore(settings.deployments_dir).save(record)
    await start_recorded(settings, record)

    operator = ScriptedApprover([WITH_STEPS], name="operator")
    run = await upgrade(
        settings, record, UpgradeRequest(image="nvcr.io/nvidia/vllm:26.06-py3"),
        soak_s=1, wait_s=120, approver_factory=lambda rules: operator,
    )  # fmt: skip

    assert run.outcome == "upgraded", run.detail
    assert [r.tool for r in operator.seen] == ["propose_plan"]
    [now], _ = RecordStore(settings.deployments_dir).load()
    assert now.id == record.id and now.recorded_at > record.recorded_at
    assert now.fingerprint["image"] == "nvcr.io/nvidia/vllm:26.06-py3"
    engine = [s for s in now.steps if s["kind"] in ENGINE_KINDS]
    assert all(OLD_IMAGE not in a for s in engine for a in s["actions"])
    assert settings.inventory is not None
    async with SSHPool(Inventory.load(settings.inventory)) as pool:
        status = await deployment_status(now, pool)
    assert (status.state, status.reasons) == ("serving", [])


SMALL = "Qwen/Qwen3-30B-A3B-FP8"


def small_story() -> DeploymentRecord:
    """The story's deployment serving a ~31 GB model at 0.4 of each Spark: two fit together."""
    record = recorded_story()
    text = json.dumps(record.steps).replace(record.model, SMALL)
    escaped = (json.dumps(re.escape(name))[1:-1] for name in (record.model, SMALL))
    text = text.replace(*escaped)  # the checks' patterns name it too
    steps = json.loads(text.replace("--gpu-memory-utilization 0.8", "--gpu-memory-utilization 0.4"))
    return record.model_copy(
        update={
            "id": record.id.replace("qwen3.5-122b-a10b-fp8", "qwen3-30b-a3b-fp8"),
            "model": SMALL,
            "steps": steps,
            "fingerprint": {**record.fingerprint, "model": SMALL},
        }
    )


async def container_ids(settings: Settings) -> dict[str, str]:
    assert settings.inventory is not None
    async with SSHPool(Inventory.load(settings.inventory)) as pool:
        ids = {}
        for host in ("spark-a", "spark-b"):
            ps = await pool.run(host, "docker ps --format '{{.Names}} {{.ID}}'")
            ids |= {f"{host}/{n}": i for n, i in (line.split() for line in ps.stdout.splitlines())}
        return ids


@pytest.mark.timeout(600)
@pytest.mark.parametrize("cluster", ["upgrade-pair"], indirect=True)
async def test_blue_green_moves_the_endpoint_only_after_the_new_one_is_proven(cluster, settings):
    record = small_story()
    RecordStore(settings.deployments_dir).save(record)
    await start_recorded(settings, record)
    operator = ScriptedApprover([WITH_STEPS], name="operator")
    run = await upgrade(
        settings, record, UpgradeRequest(image="nvcr.io/nvidia/vllm:26.06-py3"),
        soak_s=1, wait_s=120, approver_factory=lambda rules: operator,
    )  # fmt: skip
    assert run.outcome == "upgraded", run.detail
    [path] = list(settings.transcripts_dir.glob("*.jsonl"))
    [approved] = [e["change"] for e in map(json.loads, path.read_text().splitlines())
                  if (e.get("change") or {}).get("kind") == "plan_approved"]  # fmt: skip
    assert approved["plan"]["risks"][0].startswith("blue/green: the old engine holds 0.4")
    [now], _ = RecordStore(settings.deployments_dir).load()
    assert (now.endpoint, sorted(s.container for s in now.started)) == (
        "spark-a:8001",
        ["scout-vllm-next", "scout-vllm-next"],
    )
    assert sorted(await container_ids(settings)) == [
        "spark-a/scout-vllm-next",
        "spark-b/scout-vllm-next",
    ]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("cluster", ["upgrade-pair"], indirect=True)
async def test_a_failed_blue_green_upgrade_never_stops_the_old_engine(cluster, settings):
    record = small_story()
    RecordStore(settings.deployments_dir).save(record)
    await start_recorded(settings, record)
    before = await container_ids(settings)
    operator = ScriptedApprover([WITH_STEPS], name="operator")
    run = await upgrade(
        settings, record, UpgradeRequest(image="scout-sim/vllm:gibberish"),
        soak_s=1, wait_s=120, approver_factory=lambda rules: operator,
    )  # fmt: skip
    assert run.outcome == "rolled back", run.detail
    assert [r.tool for r in operator.seen] == ["propose_plan"]
    assert await container_ids(settings) == before  # the old engine's containers, never restarted
    [path] = list(settings.transcripts_dir.glob("*.jsonl"))
    covered = [c for c in plan_approvals(path) if c.startswith("rollback step")]
    assert covered == [  # the new engine cleared on both hosts, the old one proven again
        "rollback step 1 as approved with the plan",
        "rollback step 2 as approved with the plan",
        "rollback step 9 as approved with the plan",
    ]
    [kept], _ = RecordStore(settings.deployments_dir).load()
    assert kept == record
