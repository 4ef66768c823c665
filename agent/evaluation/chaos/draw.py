"""Stories drawn from a fixed seed, in order, without running anything.

Hypothesis hands out examples to a test function; walking its strategy once with a seed and no
example database gives the same stories every time, which is what a reproducible chaos run
needs (the CI seed, the bench, `scout eval --planner chaos`).
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from agent.evaluation.chaos.moves import Story, stories


def walk(
    count: int,
    at: int,
    body: Callable[[Story], None],
    *,
    shrink: bool = False,
    strategy: st.SearchStrategy[Story] | None = None,
) -> None:
    """Calls `body` with each of `count` stories drawn from seed `at`; with `shrink`, a story
    `body` fails on is shrunk by hypothesis and raised."""

    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        phases=[Phase.generate, Phase.shrink] if shrink else [Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @seed(at)
    @given(strategy or stories())
    def each(story: Story) -> None:
        body(story)

    each()


def draw(count: int, at: int, strategy: st.SearchStrategy[Story] | None = None) -> list[Story]:
    """The stories drawn for `count` examples from seed `at`, in order."""
    drawn: list[Story] = []
    walk(count, at, drawn.append, strategy=strategy)
    return drawn
