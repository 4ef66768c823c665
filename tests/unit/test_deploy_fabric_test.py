"""The fabric test's verdict on real nccl-tests output: healthy passes, degraded is a finding."""

from __future__ import annotations

from pathlib import Path

from tests.support.sparks import reference_pair
from tools.deploy.choices import DeployChoices
from tools.deploy.fabric import find_fabric
from tools.deploy.fabric_test import bandwidth_verdict, fabric_test_step

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "recon"


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
    step = fabric_test_step(choices, find_fabric(reference_pair(), choices.hosts), [])
    assert step is not None and step.job == "fabric-test" and step.host == "spark-a"
    command = step.actions[0]
    assert command.startswith("mpirun -np 2 -H 192.168.100.10:1,192.168.100.11:1 ")
    assert "-x NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1 -x NCCL_IB_MERGE_NICS=1" in command
    assert command.endswith("$HOME/nccl-tests/build/all_gather_perf -b 1G -e 1G -f 2")
    assert "StrictHostKeyChecking" not in command
