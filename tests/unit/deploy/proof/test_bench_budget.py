"""Quick's plan: as many requests per level as ~2 minutes of the engine's time pay for."""

from __future__ import annotations

import pytest

from tools.deploy.proof.bench_budget import (
    QUICK_BUDGET_S,
    QUICK_CAP,
    plan_levels,
    single_request_s,
)

LEVELS = (1, 4, 16)


@pytest.mark.parametrize("single_s", [0.05, 0.8, 4.5, 9.0, 14.0, 40.0])
def test_the_plan_spends_no_more_than_its_budget(single_s: float) -> None:
    plan = plan_levels(LEVELS, 3, single_s, QUICK_BUDGET_S)
    spent = sum(level.cost_s for level in plan.levels)
    assert plan.levels and plan.levels[0].concurrency == 1  # never a proof of nothing
    if len(plan.levels) > 1 or plan.levels[0].runs > 1:
        assert spent <= QUICK_BUDGET_S
    assert all(level.measured <= QUICK_CAP + level.runs for level in plan.levels)
    assert {level.concurrency for level in plan.levels} | set(plan.unmeasured) == set(LEVELS)


def test_a_fast_engine_gets_quicks_hundred_at_every_level_over_all_runs() -> None:
    plan = plan_levels(LEVELS, 3, 0.05, QUICK_BUDGET_S)
    assert [(lv.concurrency, lv.runs) for lv in plan.levels] == [(1, 3), (4, 3), (16, 3)]
    assert all(lv.measured >= QUICK_CAP for lv in plan.levels) and not plan.unmeasured


def test_a_slow_engine_gets_fewer_runs_and_says_which_levels_it_cannot_afford() -> None:
    plan = plan_levels(LEVELS, 3, 9.0, QUICK_BUDGET_S - 27)  # three timed warm-ups spent
    assert plan.levels[0].concurrency == 1 and plan.levels[0].measured < QUICK_CAP
    assert 16 in plan.unmeasured
    said = plan.unmeasured[16]
    assert "needs ~" in said and "s were left for it: `full` measures it" in said


def test_every_run_pays_for_a_full_round_of_its_concurrency() -> None:
    for single_s in (0.5, 2.0, 6.0):
        for level in plan_levels(LEVELS, 3, single_s, QUICK_BUDGET_S).levels:
            assert level.prompts >= max(level.concurrency, 2) and level.measured >= level.runs


def test_one_request_is_the_warm_ups_median_past_the_first() -> None:
    assert single_request_s([9.0, 5.0, 6.0, 4.0]) == 5.0  # the first: cached by the test run
    assert single_request_s([7.0]) == 7.0 and single_request_s([]) is None
