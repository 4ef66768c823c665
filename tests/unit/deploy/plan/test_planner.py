"""The deployment planner called directly: facts and choices in, typed phases or a refusal out.

No SSH, no web, no session: the planner reads only what it is given. The seed pair's facts come
from tests/support/sparks.py (built after the real Spark captures); the single Spark that cannot
hold the model is read from the real captures in tests/fixtures/recon through recon's readers.
"""

from __future__ import annotations

import inspect

from tests.support.captured_host import host_from
from tests.support.sparks import reference_pair, seed_pair
from tools.checks import GB
from tools.deploy.choices import DeployChoices
from tools.deploy.plan.planner import (
    ClusterFacts,
    DeploymentPlan,
    Measured,
    PlanRefusal,
    plan_deployment,
)
from tools.deploy.plan.render import render_plan, render_refusal

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
PAIR = ["spark-a", "spark-b"]
WEIGHTS = Measured(model_size_bytes=119 * GB)
# a DGX Spark's own recon ("hutch": 121 GiB unified memory, GB10, RoCE cage p1 up)
HUTCH = {
    "nvidia-smi": "spark_nvidia-smi_580.95.05.txt",
    "free": "spark_free_h.txt",
    "df": "spark_df_h_root.txt",
    "uname": "spark_uname_a.txt",
    "ibdev2netdev": "spark_ibdev2netdev_p1_up.txt",
    "rdma-link": "spark_rdma_link_show.txt",
}


def planned(facts: ClusterFacts, measured: Measured = WEIGHTS, **options) -> DeploymentPlan:
    result = plan_deployment(facts, DeployChoices(model=MODEL, hosts=PAIR, **options), measured)
    assert isinstance(result, DeploymentPlan), result
    return result


def refused(facts: ClusterFacts, measured: Measured = WEIGHTS, **options) -> PlanRefusal:
    hosts = options.pop("hosts", PAIR)
    result = plan_deployment(facts, DeployChoices(model=MODEL, hosts=hosts, **options), measured)
    assert isinstance(result, PlanRefusal), result
    return result


def test_the_planner_is_a_plain_function() -> None:
    assert not inspect.iscoroutinefunction(plan_deployment)


def test_seed_pair_stops_the_old_container_and_raises_the_link_before_anything_else() -> None:
    deployment = planned(ClusterFacts(seed_pair()))

    fixes = deployment.phase("fixes")
    assert [(s.kind, s.host) for s in fixes] == [("stop", "spark-a"), ("link-up", "spark-b")]
    assert fixes[0].actions == ["docker stop vllm_node"]
    assert deployment.steps[:2] == fixes
    assert deployment.unresolved == ()


def test_seed_pair_serves_with_tensor_parallel_two_across_both_nodes() -> None:
    deployment = planned(ClusterFacts(seed_pair()))

    assert deployment.choices.hosts == PAIR
    assert (deployment.choices.tensor_parallel, deployment.choices.pipeline_parallel) == (2, 1)
    launch = deployment.phase("launch")
    assert {s.host for s in launch} == set(PAIR)
    assert [(s.kind, s.host) for s in launch if s.kind in ("ray-head", "ray-join", "serve")] == [
        ("ray-head", "spark-a"),
        ("ray-join", "spark-b"),
        ("serve", "spark-a"),
    ]


def test_seed_pair_needs_put_fixes_and_supplies_before_the_launch() -> None:
    deployment = planned(ClusterFacts(seed_pair()))
    fix_ids = {s.id for s in deployment.phase("fixes")}
    link_up = next(s.id for s in deployment.phase("fixes") if s.kind == "link-up")
    supplies = deployment.phase("supplies")
    copy = next(s for s in supplies if s.kind == "copy")
    (test,) = deployment.phase("fabric-test")

    # the weights cross the fabric only once its link is up; the fabric is measured after
    assert link_up in copy.needs and "download" in {_kind(deployment, n) for n in copy.needs}
    assert {link_up, copy.id} <= set(test.needs)
    earlier = fix_ids | {s.id for s in supplies} | {test.id}
    for step in deployment.phase("launch"):
        assert earlier <= set(step.needs), step.id
    seen: set[str] = set()
    for step in deployment.steps:  # the rollout order never runs a step before its needs
        assert set(step.needs) <= seen, step.id
        seen.add(step.id)


def test_the_head_ssh_is_checked_for_the_worker_address_its_commands_name() -> None:
    by_name = planned(ClusterFacts(seed_pair()))
    by_address = planned(
        ClusterFacts(seed_pair(), addresses={"spark-a": "10.0.0.1", "spark-b": "10.0.0.2"})
    )

    # spark-b's link is down: its fabric address is looked up through the head's ssh
    assert by_name.peer_targets == {"spark-b": ["spark-b"]}
    assert by_address.peer_targets == {"spark-b": ["10.0.0.2"]}


def test_a_healthy_pair_needs_no_fixes() -> None:
    deployment = planned(ClusterFacts(reference_pair()))

    assert deployment.phase("fixes") == ()
    assert deployment.phase("launch")[-1].kind == "serve"


def test_a_spark_too_small_for_the_model_is_refused_with_the_memory_blocker() -> None:
    facts = ClusterFacts({"hutch": host_from("hutch", HUTCH)})

    refusal = refused(facts, hosts=["hutch"])

    assert refusal.kind == "preflight"
    memory = [f for f in refusal.findings if f.check == "memory"]
    assert [(f.kind, f.severity) for f in memory] == [("model_does_not_fit", "blocker")]
    assert refusal.preflighted is not None and refusal.preflighted.size == 119 * GB


def test_an_unreachable_worker_is_refused_before_any_step() -> None:
    facts = ClusterFacts({"spark-a": reference_pair()["spark-a"]}, {"spark-b": "No route"})

    refusal = refused(facts)

    assert (refusal.kind, [(f.check, f.hosts) for f in refusal.findings]) == (
        "preflight",
        [("reachable", ["spark-b"])],
    )


def test_a_gated_model_without_a_token_is_refused_before_any_download() -> None:
    refusal = refused(ClusterFacts(seed_pair()), Measured(model_size_bytes=119 * GB, gated=True))

    assert refusal.kind == "weights"
    assert [(f.kind, f.hosts) for f in refusal.findings] == [("gated_no_token", ["spark-a"])]
    answer = render_refusal(refusal)
    assert answer.is_error and "gated_no_token" in {f["kind"] for f in answer.data["preflight"]}


def test_a_known_bad_image_is_refused_by_the_recipe_without_preflight() -> None:
    refusal = refused(ClusterFacts(seed_pair()), image="nvcr.io/nvidia/vllm:26.07-py3")

    assert (refusal.kind, refusal.preflighted) == ("recipe", None)
    assert "known bad" in refusal.problems[0]


def test_the_same_facts_give_the_same_plan_and_its_answer_names_its_hash() -> None:
    first = planned(ClusterFacts(seed_pair()))
    again = planned(ClusterFacts(seed_pair()))

    assert first.plan == again.plan and first.steps == again.steps
    answer = render_plan(first)
    assert answer.data["plan_hash"] == first.plan.digest()
    assert answer.text.endswith(f'propose_plan {{"plan_hash": "{first.plan.digest()}"}}.')
    assert answer.summary == f"vllm-ray {MODEL} on spark-a, spark-b"


def _kind(deployment: DeploymentPlan, step_id: str) -> str:
    return next(s.kind for s in deployment.steps if s.id == step_id)
