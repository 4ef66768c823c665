"""A model that does not fit: the plan names the quantisations of the same model that would,
from the recipes it can see, each judged by the one fit rule, with the trade-off in one line."""

from __future__ import annotations

from tests.support.runner_table import RECIPES
from tests.support.sparks import spark
from tools.checks import GB
from tools.deploy.choices import DeployChoices
from tools.deploy.plan.planner import ClusterFacts, DeploymentPlan, Measured, plan_deployment
from tools.deploy.plan.quant_offer import precision, same_model
from tools.deploy.recipe_book.catalog import entries
from tools.deploy.recipe_book.load import read_recipe_file

COMMUNITY = tuple(e.recipe for e in entries([RECIPES]) if e.recipe is not None)


def _memory_blocker(model: str, size_gb: float, nodes: int = 1, **measured):
    hosts = [f"spark-{i}" for i in range(nodes)]
    facts = ClusterFacts({h: spark(h, 10 + i) for i, h in enumerate(hosts)})
    plan = plan_deployment(
        facts,
        DeployChoices(model=model, hosts=hosts),
        Measured(model_size_bytes=round(size_gb * GB), **measured),
    )
    found = plan.unresolved if isinstance(plan, DeploymentPlan) else plan.findings
    return next(f for f in found if f.kind == "model_does_not_fit")


def test_the_names_of_one_model_in_several_precisions_match() -> None:
    assert same_model("Qwen/Qwen3.5-122B-A10B-FP8") == "qwen3.5-122b-a10b"
    assert same_model("Intel/Qwen3.5-122B-A10B-int4-AutoRound") == "qwen3.5-122b-a10b"
    assert same_model("cyankiwi/MiniMax-M2.5-AWQ-4bit") == same_model("MiniMaxAI/MiniMax-M2.5")
    assert same_model("Qwen/Qwen3.5-397B-A17B-FP8") != same_model("Qwen/Qwen3.5-122B-A10B-FP8")
    assert precision("nvidia/Foo-NVFP4") == "4-bit float"


def test_qwen_fp8_on_one_spark_is_offered_the_int4_autoround_its_recipe_states() -> None:
    blocker = _memory_blocker("Qwen/Qwen3.5-122B-A10B-FP8", 119)

    assert "Intel/Qwen3.5-122B-A10B-int4-AutoRound (4-bit integer, ~67 GB as its recipe states" in (
        blocker.fix or ""
    )
    assert "fits 1 node here: less memory at lower fidelity than" in (blocker.fix or "")
    offered = [c for c in blocker.fit if c.size_bytes == 67 * GB]
    assert [c.state for c in offered] == ["fits"]


def test_a_community_recipe_that_does_not_fit_names_its_siblings_quantisation() -> None:
    given = read_recipe_file(RECIPES / "4x-spark-cluster/qwen3.5-397b-a17B-fp8.yaml")
    blocker = _memory_blocker(
        given.models[0], 400, nodes=4, given_recipe=given, visible_recipes=COMMUNITY
    )

    assert (
        "Intel/Qwen3.5-397B-A17B-int4-AutoRound (4-bit integer, ~200 GB estimated from the "
        "precisions the names state; recipe qwen3.5-397b-int4-autoround) fits 3 nodes here"
    ) in (blocker.fix or "")


def test_a_stated_size_wins_over_an_estimate_and_an_unmarked_checkpoint_is_not_smaller() -> None:
    blocker = _memory_blocker("Qwen/Qwen3.5-122B-A10B-FP8", 119, visible_recipes=COMMUNITY)

    assert "~67 GB as its recipe states" in (blocker.fix or "")
    assert "estimated" not in (blocker.fix or "")
    assert "Qwen/Qwen3.5-122B-A10B (" not in (blocker.fix or "")  # BF16: larger, not offered


def test_a_quantisation_whose_size_is_unknown_is_named_never_said_to_fit() -> None:
    blocker = _memory_blocker("MiniMaxAI/MiniMax-M2.5", 230, visible_recipes=COMMUNITY)

    assert "cyankiwi/MiniMax-M2.5-AWQ-4bit (4-bit integer; recipe" in (blocker.fix or "")
    assert "size unknown: look it up before choosing it" in (blocker.fix or "")


def test_a_quantisation_that_does_not_fit_either_is_not_offered_as_fitting() -> None:
    blocker = _memory_blocker("Qwen/Qwen3.5-397B-A17B-FP8", 400, visible_recipes=COMMUNITY)

    assert "int4-AutoRound" not in (blocker.fix or "")  # ~200 GB fits no single Spark either
    assert blocker.fix == "use more nodes or a smaller (quantised) model"


def test_the_recipes_trade_off_line_asks_the_fit_rule_on_the_plans_first_node() -> None:
    hosts = ["spark-0", "spark-1"]

    def notes(available_gb: float) -> str:
        facts = ClusterFacts(
            {h: spark(h, 10 + i, available_gb=available_gb) for i, h in enumerate(hosts)}
        )
        choices = DeployChoices(model="Qwen/Qwen3.5-122B-A10B-FP8", hosts=hosts)
        plan = plan_deployment(facts, choices, Measured(model_size_bytes=119 * GB))
        assert isinstance(plan, DeploymentPlan), plan
        return " ".join(plan.recipe_notes)

    assert "trade-off: one Spark serves the INT4 AutoRound checkpoint" in notes(110)
    # 67 GB + its headroom is ~74 GB: more than the 70 GB CUDA can give, so no trade-off
    assert "trade-off:" not in notes(70)
