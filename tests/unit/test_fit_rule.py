"""The one fit rule: what a node must hold (weights, headroom, the KV of an asked context), and
the messages that quote its verdict instead of computing their own."""

from __future__ import annotations

from tests.support.sparks import spark
from tools.checks import GB
from tools.checks.budget import NodeBudget
from tools.checks.fit_rule import RUNTIME_RESERVE_BYTES, Demand, fit_on
from tools.deploy.choices import DeployChoices
from tools.deploy.plan.planner import ClusterFacts, Measured, PlanRefusal, plan_deployment
from tools.deploy.recipe_book.model_shape import KvShape


def test_without_a_context_asked_the_headroom_is_a_tenth_of_the_weights() -> None:
    need = Demand(100 * GB).per_node(2)
    assert (need.weights, need.headroom) == (50 * GB, 5 * GB)


def test_an_asked_context_needs_its_kv_and_the_runtime_reserve_when_that_is_larger() -> None:
    need = Demand(100 * GB, context_kv_bytes=40 * GB).per_node(2)
    assert need.headroom == 20 * GB + RUNTIME_RESERVE_BYTES
    assert Demand(100 * GB, context_kv_bytes=GB).per_node(2).headroom == 5 * GB


def test_the_verdict_is_fits_once_stopped_only_when_something_holds_memory() -> None:
    held = NodeBudget("a", 40 * GB, None, holders=(("vllm_node", 60 * GB),))
    bare = NodeBudget("b", 40 * GB, None)
    assert fit_on(held, Demand(60 * GB), 1, 0.9).state == "fits_once_stopped"
    assert fit_on(bare, Demand(60 * GB), 1, 0.9).state == "short"
    assert fit_on(bare, Demand(30 * GB), 1, 0.9).state == "fits"


def test_a_layout_that_does_not_hold_the_model_never_says_it_fits() -> None:
    facts = ClusterFacts({"spark-0": spark("spark-0", 10)})
    plan = plan_deployment(
        facts,
        DeployChoices(model="Qwen/Qwen3.5-122B-A10B-FP8", hosts=["spark-0"]),
        Measured(model_size_bytes=119 * GB),
    )
    report = plan.preflighted.report  # type: ignore[union-attr]
    layout = next(f for f in report.findings if f.check == "layout")
    # was "[ok] layout: 1 node: ~131 GB with KV headroom fits in spark-0's ~105 GB usable"
    assert layout.severity == "info" and layout.kind == "layout_short"
    assert "~131 GB with KV headroom does not fit in spark-0's ~105 GB usable" in layout.message
    assert [c.state for c in layout.fit] == ["short"]
    assert any(f.kind == "model_does_not_fit" for f in report.blockers)


def test_a_context_the_operator_asks_for_counts_in_the_fit() -> None:
    hosts = ["spark-0", "spark-1"]
    facts = ClusterFacts({h: spark(h, 10 + i) for i, h in enumerate(hosts)})
    shape = KvShape(262144, 80, 8, 128, "config.json")  # 320 KiB a token, dense 70B-class
    choices = DeployChoices(model="meta-llama/Llama-3.3-70B-Instruct", hosts=hosts)

    def memory(length: int | None):
        asked = choices.model_copy(update={"max_model_len": length})
        plan = plan_deployment(
            facts, asked, Measured(model_size_bytes=141 * GB, config_shape=shape)
        )
        assert not isinstance(plan, PlanRefusal) or plan.preflighted, plan
        report = plan.preflighted.report  # type: ignore[union-attr]
        return next(f for f in report.findings if f.check == "memory" and f.fit)

    assert memory(None).kind == "model_fits"
    long = memory(262144)  # one sequence: ~86 GB of KV, ~43 GB a node beside ~70 GB of weights
    assert long.kind == "model_does_not_fit"
    assert "for one sequence of the context asked and activations" in long.message


def test_the_consistency_check_catches_two_statements_that_disagree() -> None:
    from tests.support.fit_claims import disagreements, wrong_words
    from tools.world.findings import Finding, FitClaim

    claim = FitClaim(host="h", nodes=1, size_bytes=119 * GB, utilization=0.8, state="short")
    said = [("recon", claim), ("layout", claim.model_copy(update={"state": "fits"}))]
    assert disagreements(said)  # fits now in one, short in the other
    holder = Finding(
        severity="warning",
        check="memory",
        kind="gpu_process_holds_memory",
        hosts=["h"],
        message="stopping it would let a ~119 GB model fit",
        fit=[claim],
    )
    assert wrong_words([holder]) == [holder.line()]
