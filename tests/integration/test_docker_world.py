"""docker_ctl hands what it listed to the world model: the host's containers follow a stop."""

import pytest

from agent.loop.scripted_client import ScriptedClient
from agent.loop.transcript import read_transcript
from agent.replay.redrive import sim_runtime
from agent.safety.approvers.scripted import ScriptedApprover
from tests.support.plans import one_step_plan
from tests.support.session_kit import text_turn, tool_turn

pytestmark = pytest.mark.slow

PLAN = one_step_plan(
    "free spark-a",
    title="stop vllm_node",
    host="spark-a",
    actions=["docker_ctl stop vllm_node"],
    expected_downtime="vllm_node stops",
    rollback="docker start vllm_node",
    success_check="docker ps shows it exited",
)


async def test_stopping_a_container_updates_the_world(tmp_path):
    script = [
        tool_turn([("t1", "recon", {"hosts": ["spark-a"]})]),
        tool_turn(
            [("t2", "docker_ctl", {"host": "spark-a", "action": "stop", "container": "vllm_node"})]
        ),
        tool_turn([("t3", "docker_ctl", {"host": "spark-a", "action": "ps"})]),
        text_turn("stopped"),
    ]
    approver = ScriptedApprover([("approved", "")], name="operator")
    async with sim_runtime(
        "seed-pair",
        client=ScriptedClient(script),
        approver_factory=lambda rules: approver,
        transcript_path=tmp_path / "t.jsonl",
    ) as runtime:
        runtime.state.approve_plan(PLAN)
        await runtime.session.send("stop it")
        containers = {c.name: c for c in runtime.world.hosts["spark-a"].docker.containers}
    assert containers["vllm_node"].state == "exited"
    assert approver.seen and approver.seen[0].risk == "destructive"
    updates = [e for e in read_transcript(tmp_path / "t.jsonl").events if e.type == "world_update"]
    assert any("docker on spark-a refreshed" in e.summary for e in updates)


async def test_a_container_docker_ctl_ran_is_scouts_own(tmp_path):
    """A container Scout ran is marked as its own on the next probe (DESIGN rule 14)."""
    run = {"host": "spark-a", "action": "run", "image": "vllm-node", "name": "scout-probe",
           "detach": True, "command": ["sleep", "infinity"]}  # fmt: skip
    script = [
        tool_turn([("t1", "docker_ctl", run)]),
        tool_turn([("t2", "recon", {"hosts": ["spark-a"]})]),
        text_turn("running"),
    ]
    approver = ScriptedApprover([("approved", "")], name="operator")
    async with sim_runtime(
        "seed-pair",
        client=ScriptedClient(script),
        approver_factory=lambda rules: approver,
        transcript_path=tmp_path / "t.jsonl",
    ) as runtime:
        runtime.state.approve_plan(PLAN)
        await runtime.session.send("run one")
        containers = {c.name: c for c in runtime.world.hosts["spark-a"].docker.containers}
    assert containers["scout-probe"].started_by_scout.startswith("docker_ctl: docker run")
    assert containers["vllm_node"].started_by_scout is None


async def test_a_container_a_shell_command_ran_is_scouts_own(tmp_path):
    """`docker run --name` through ssh_exec: Scout's own once it exited 0 (DESIGN rule 14)."""
    run = {"host": "spark-a", "command": "docker run -d --name scout-shell vllm-node sleep 1d"}
    script = [
        tool_turn([("t1", "ssh_exec", run)]),
        tool_turn([("t2", "recon", {"hosts": ["spark-a"]})]),
        text_turn("running"),
    ]
    approver = ScriptedApprover([("approved", "")], name="operator")
    async with sim_runtime(
        "seed-pair",
        client=ScriptedClient(script),
        approver_factory=lambda rules: approver,
        transcript_path=tmp_path / "t.jsonl",
    ) as runtime:
        runtime.state.approve_plan(PLAN)
        await runtime.session.send("run one")
        containers = {c.name: c for c in runtime.world.hosts["spark-a"].docker.containers}
    assert containers["scout-shell"].started_by_scout == f"ssh_exec: {run['command']}"
    assert containers["vllm_node"].started_by_scout is None
