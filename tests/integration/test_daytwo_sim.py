"""Day two on the simulated fresh pair: the story's proven deployment leaves a record; status
reads it as serving, degraded, drifted or gone; teardown --restore, approved once, leaves the
pair as recon found it before the story.

The story runs as `scout run` does (run_goal: the recorded turns through the real SDK and the
replay server, the signed example webhook approving the plan with its steps). Teardown runs as
`scout teardown` does (faces/daytwo.takedown), with an approver that counts what it is asked.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from agent.daytwo.status import deployment_status
from agent.faces.daytwo import takedown
from agent.faces.headless import EXIT_DONE
from agent.runtime.deployment_record import DeploymentRecord, RecordStore
from agent.runtime.settings import Settings, scout_home
from agent.safety.approvers.scripted import ScriptedApprover
from sim.cluster import SimCluster
from sim.fakehost.procs import signal_ours
from sim.fakehost.state import locked_state, read_state
from tests.integration.test_fresh_pair_approvals import run_headless
from tests.support.story_script import story_script
from tools.recon.probe import probe_hosts
from tools.ssh import Inventory, SSHPool

pytestmark = pytest.mark.slow

HOSTS = ["spark-a", "spark-b"]
WITH_STEPS = {"kind": "approved", "message": "", "approve_steps": True}
RECORD = "qwen3.5-122b-a10b-fp8@spark-a-8000"


async def what_recon_sees(pool: SSHPool) -> dict[str, Any]:
    """Per host, what the operator compares: containers and their states, the interfaces' states,
    the listening ports."""
    found = await probe_hosts(pool, HOSTS)
    assert found.failures == {}
    return {
        host: {
            "containers": sorted((c.name, c.state) for c in facts.docker.containers),
            "links": sorted((i.name, i.state) for i in facts.network.interfaces),
            "ports": sorted(facts.services.listening_ports),
        }
        for host, facts in found.facts.items()
    }


async def deploy(cluster: SimCluster, tmp_path: Path) -> DeploymentRecord:
    code, _, _, err = await run_headless(cluster, tmp_path, story_script())
    assert code == EXIT_DONE, err
    records, problems = RecordStore(scout_home() / "deployments").load()  # scout run's default
    assert problems == [] and [r.id for r in records] == [RECORD]
    return records[0]


@pytest.fixture
def settings(cluster: SimCluster, tmp_path: Path) -> Settings:
    return Settings(
        inventory=cluster.write_inventory(tmp_path / "day2" / "inventory.yaml"),
        transcripts_dir=tmp_path / "day2" / "transcripts",
        log_file=tmp_path / "day2" / "scout.log",
        deployments_dir=scout_home() / "deployments",
    )


@pytest.mark.timeout(600)
@pytest.mark.parametrize("cluster", ["fresh-pair"], indirect=True)
async def test_teardown_restore_leaves_the_pair_as_recon_found_it(cluster, settings, tmp_path):
    assert settings.inventory is not None
    async with SSHPool(Inventory.load(settings.inventory)) as pool:
        before = await what_recon_sees(pool)
    record = await deploy(cluster, tmp_path)
    assert sorted((s.host, s.container) for s in record.started) == [
        ("spark-a", "scout-vllm"),
        ("spark-b", "scout-vllm"),
    ]
    assert (record.changes[0].host, record.changes[0].undo) == ("spark-a", "docker start vllm_node")
    assert record.fingerprint["image"] == "nvcr.io/nvidia/vllm:26.05-py3"

    async with SSHPool(Inventory.load(settings.inventory)) as pool:
        assert await running_jobs(pool, "spark-a")  # the engine's job runs, as a check can see

    operator = ScriptedApprover([WITH_STEPS], name="operator")
    run = await takedown(
        settings, record, "teardown", restore=True, approver_factory=lambda rules: operator
    )
    assert run.outcome == "done", run.detail
    assert [r.tool for r in operator.seen] == ["propose_plan"]  # one decision: the plan
    assert RecordStore(settings.deployments_dir).load() == ([], [])  # the record is retired

    async with SSHPool(Inventory.load(settings.inventory)) as pool:
        after = await what_recon_sees(pool)
        assert after == before
        for host in HOSTS:  # no job of Scout's still runs
            jobs = await pool.run(
                host, "cat ~/.scout/jobs/*/pid 2>/dev/null | xargs -r ps -o pid= -p"
            )
            assert jobs.stdout.strip() == "", (host, jobs.stdout)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("cluster", ["fresh-pair"], indirect=True)
async def test_status_tells_serving_drifted_degraded_and_gone(cluster, settings, tmp_path):
    record = await deploy(cluster, tmp_path)
    assert settings.inventory is not None
    async with SSHPool(Inventory.load(settings.inventory)) as pool:
        serving = await deployment_status(record, pool)
        assert (serving.state, serving.reasons) == ("serving", [])
        assert serving.answer

        # the image tag was pulled again and now names another image than the one proven
        with locked_state(cluster.host_dir("spark-b")) as state:
            for image in state["docker"]["images"]:
                if image["repository"] == "nvcr.io/nvidia/vllm":
                    image["id"] = "0123456789ab"
        drifted = await deployment_status(record, pool)
        assert drifted.state == "drifted"
        assert drifted.reasons == [
            "spark-b: image nvcr.io/nvidia/vllm:26.05-py3 is now 0123456789ab, proven as "
            + record.fingerprint["image_id"][:12]
        ]

        # the engine died inside its container (killing the `docker exec` client would not end
        # it, on the simulator as with real docker): the container is up, nothing generates
        engine = read_state(cluster.host_dir("spark-a"))["docker"]["containers"]["scout-vllm"]
        assert signal_ours(engine["pids"], cluster.host_dir("spark-a"), signal.SIGKILL) > 0
        degraded = await deployment_status(record, pool)
        assert degraded.state == "degraded", degraded.reasons

        gone = await pool.run("spark-b", "docker rm -f scout-vllm")
        assert gone.exit_status == 0, gone.stderr
        status = await deployment_status(record, pool)
        assert (status.state, status.reasons) == ("gone", ["scout-vllm is not on spark-b"])
        assert json.loads(json.dumps(status.as_json()))["state"] == "gone"


async def running_jobs(pool: SSHPool, host: str) -> list[str]:
    """The pids of Scout's jobs on `host` that still run (each job folder holds its pid)."""
    found = await pool.run(
        host, "for f in ~/.scout/jobs/*/pid; do kill -0 $(cat $f) && cat $f; done"
    )
    return found.stdout.split()
