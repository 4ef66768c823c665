"""The test wait returns what came true, plain or awaited, and fails naming what never did."""

from __future__ import annotations

import pytest

from tests.support.waiting import until


async def test_returns_the_first_true_value_of_a_plain_condition() -> None:
    answers = iter([None, "", "ready"])
    assert await until(lambda: next(answers), "the third answer") == "ready"


async def test_awaits_an_async_condition() -> None:
    polls: list[int] = []

    async def third_time() -> list[int]:
        polls.append(1)
        return polls if len(polls) == 3 else []

    assert await until(third_time) == [1, 1, 1]


async def test_a_condition_that_never_comes_true_fails_naming_it() -> None:
    with pytest.raises(AssertionError) as failed:
        await until(lambda: False, "the moon", within=0.2)
    assert str(failed.value) == "gave up after 0.2 s waiting for the moon"
