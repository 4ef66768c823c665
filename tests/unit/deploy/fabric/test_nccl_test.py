"""The fabric test: its command (addresses known, or read when it runs), its verdict on real
nccl-tests output (healthy passes, degraded is a finding), and its record in the world model."""

from __future__ import annotations

from pathlib import Path

from agent.world.model import WorldModel
from agent.world.render import render_compact
from tests.support.sparks import reference_pair, seed_pair
from tools.deploy.choices import DeployChoices
from tools.deploy.fabric.nccl_test import (
    bandwidth_verdict,
    fabric_measurement,
    fabric_test_risk,
    fabric_test_step,
)
from tools.deploy.fabric.paths import find_fabric
from tools.world.facts import FabricTestFacts

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "recon"


def test_healthy_run_passes_and_degraded_run_is_a_finding() -> None:
    healthy = (FIXTURES / "spark_nccl_all_gather_perf_healthy.txt").read_text()
    degraded = (FIXTURES / "spark_nccl_all_gather_perf_degraded.txt").read_text()
    assert bandwidth_verdict(healthy, "spark-a") == (21.4033, None)
    busbw, finding = bandwidth_verdict(degraded, "spark-a")
    assert busbw == 2.82151 and finding is not None
    assert "far below the 200 Gb/s link" in finding.message
    assert "reboot both nodes" in (finding.fix or "")


def test_the_run_uses_both_twins_and_the_fabric_addresses() -> None:
    choices = DeployChoices(model="Qwen/Qwen3.5-122B-A10B-FP8", hosts=["spark-a", "spark-b"])
    pair = reference_pair()
    programs = {h: f.fabric_tests for h, f in pair.items()}
    step = fabric_test_step(choices, find_fabric(pair, choices.hosts), [], programs=programs)
    assert step is not None and step.job == "fabric-test" and step.host == "spark-a"
    command = step.actions[0]
    assert command.startswith("mpirun -np 2 -H 192.168.100.10:1,192.168.100.11:1 ")
    assert "-x NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1 -x NCCL_IB_MERGE_NICS=1" in command
    assert command.endswith("$HOME/nccl-tests/build/all_gather_perf -b 1G -e 1G -f 2")
    assert "StrictHostKeyChecking" not in command


def test_a_worker_whose_link_comes_up_later_is_read_over_ssh_when_the_test_runs() -> None:
    """spark-b's link is down while planning: mpirun names it by a lookup from the head over
    the SSH path the head already has to it (its inventory address), host keys checked."""
    choices = DeployChoices(model="Qwen/Qwen3.5-122B-A10B-FP8", hosts=["spark-a", "spark-b"])
    pair = seed_pair()
    fabric = find_fabric(pair, choices.hosts)
    assert fabric["spark-b"].ip is None
    programs = {h: f.fabric_tests for h, f in pair.items()}
    step = fabric_test_step(
        choices, fabric, ["link-up:spark-b"], {"spark-b": "192.168.200.13"}, programs=programs
    )
    assert step is not None and step.needs == ["link-up:spark-b"]
    assert step.title.endswith("over 2 nodes (spark-b's address read when it runs)")
    command = step.actions[0]
    assert command.startswith(
        "mpirun -np 2 -H 192.168.100.10:1,$(ssh 192.168.200.13 ip -4 -br addr show dev "
        "enp1s0f1np1 | grep -oE '[0-9]+([.][0-9]+){3}' | head -n 1):1 -x "
    )
    assert "StrictHostKeyChecking" not in command


def test_the_measurement_reaches_the_world_model_with_its_finding() -> None:
    changes = []
    world = WorldModel(on_change=lambda host, summary, new: changes.append((summary, new)))
    world.apply_round(reference_pair(), {})
    healthy = fabric_measurement(
        (FIXTURES / "spark_nccl_all_gather_perf_healthy.txt").read_text(), "spark-a"
    )
    assert healthy is not None and healthy.nodes == ["spark-fb97", "spark-4440"]
    world.record_fabric_test(healthy)
    shown = render_compact(world)
    assert (
        "fabric measured from spark-a (all_gather_perf, ranks on spark-fb97, spark-4440): "
        "21.4033 GB/s bus bandwidth (171 Gb/s; the link is 200 Gb/s)" in shown
    )
    assert not [f for f in world.findings if f.kind == "fabric_slow"]
    degraded = fabric_measurement(
        (FIXTURES / "spark_nccl_all_gather_perf_degraded.txt").read_text(), "spark-a"
    )
    world.record_fabric_test(degraded)  # type: ignore[arg-type]
    slow = [f for f in world.findings if f.kind == "fabric_slow"]
    assert len(slow) == 1 and slow[0].hosts == ["spark-a"]
    assert changes[-1][0] == "fabric measured from spark-a"
    assert [f.kind for f in changes[-1][1]] == ["fabric_slow"]  # new, so the transcript has it
    assert "2.82151 GB/s bus bandwidth (23 Gb/s; the link is 200 Gb/s)" in render_compact(world)
    assert "all_gather_perf measured 2.82151 GB/s bus bandwidth" in render_compact(world)
    world.apply_round(reference_pair(), {})  # a new probe round keeps the measured finding
    assert [f.kind for f in world.findings if f.kind == "fabric_slow"] == ["fabric_slow"]


def test_a_node_without_nccl_tests_or_unknown_means_no_test_and_a_risk() -> None:
    choices = DeployChoices(model="Qwen/Qwen3.5-122B-A10B-FP8", hosts=["spark-a", "spark-b"])
    pair = reference_pair()
    fabric = find_fabric(pair, choices.hosts)
    programs = {
        "spark-a": FabricTestFacts(nccl_tests=True, perftest=False),
        "spark-b": FabricTestFacts(),  # the probe did not say
    }
    assert fabric_test_step(choices, fabric, [], programs=programs) is None
    risk = fabric_test_risk(choices, fabric, programs)
    assert risk is not None and "recon could not tell whether spark-b has nccl-tests" in risk
    assert "make MPI=1" in risk and "sudo apt install perftest" in risk
    every = {h: f.fabric_tests for h, f in pair.items()}
    assert fabric_test_risk(choices, fabric, every) is None
