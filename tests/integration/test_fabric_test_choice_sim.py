"""Which fabric benchmark each node has is read by recon, not assumed: the plan measures the
fabric with all_gather_perf only where every node has nccl-tests built, and otherwise says in its
risks that the fabric goes unmeasured and how to fix it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.test_rollout_sim import _computed_plan
from tests.integration.test_sim_scenarios_recon import recon

pytestmark = pytest.mark.slow


async def test_with_nccl_tests_on_every_node_the_plan_measures_the_fabric() -> None:
    plan = await _computed_plan("healthy-pair")
    titles = [s["title"] for s in plan["steps"]]
    assert any(t.startswith("measure the fabric: all_gather_perf over 2 nodes") for t in titles)
    assert not [r for r in plan["risks"] if "cannot be measured" in r]


@pytest.mark.parametrize(
    ("scenario", "alternative"),
    [
        ("perftest-only", "perftest is on every node: ib_write_bw between them measures one link"),
        ("no-fabric-tests", "or `sudo apt install perftest` on every node"),
    ],
)
async def test_without_nccl_tests_the_plan_skips_the_test_and_says_why(
    scenario: str, alternative: str
) -> None:
    plan = await _computed_plan(scenario)
    assert not [s for s in plan["steps"] if "measure the fabric" in s["title"]]
    risk = next(r for r in plan["risks"] if "cannot be measured" in r)
    assert risk.startswith(
        "the fabric cannot be measured before serving (nccl-tests is not built on spark-a, "
        "spark-b); fix: build nccl-tests on every node as NVIDIA's NCCL playbook does"
    )
    assert alternative in risk


@pytest.mark.parametrize(
    ("scenario", "nccl_tests", "perftest"),
    [
        ("healthy-pair", True, True),
        ("perftest-only", False, True),
        ("no-fabric-tests", False, False),
    ],
)
async def test_recon_reads_which_benchmark_each_node_has(
    scenario: str, nccl_tests: bool, perftest: bool, tmp_path: Path
) -> None:
    probe = await recon(scenario, tmp_path)
    assert probe.failures == {}
    for facts in probe.facts.values():
        group = facts.fabric_tests
        assert (group.nccl_tests, group.perftest, group.problem) == (nccl_tests, perftest, None)
