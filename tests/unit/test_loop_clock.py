"""A timeout on the loop fires once the test moves the clock past it, and not before."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.loop_clock import movable_clock


async def test_a_long_timeout_fires_when_the_clock_is_moved_past_it() -> None:
    never = asyncio.get_running_loop().create_future()
    with movable_clock() as forward:
        waiting = asyncio.ensure_future(asyncio.wait_for(never, 3600))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        forward(3600)
        with pytest.raises(TimeoutError):
            await waiting


async def test_the_loop_keeps_its_own_clock_afterwards() -> None:
    loop = asyncio.get_running_loop()
    with movable_clock() as forward:
        before = loop.time()
        forward(3600)
        assert loop.time() - before >= 3600
    assert "time" not in vars(loop)
