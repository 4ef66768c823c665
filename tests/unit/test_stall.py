"""The simulated wedge (sim/engine/stall.py): it comes only under concurrent load, after the
scenario's count, logs its lines once, and then holds every stream."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sim.engine.stall import Stall


def test_requests_served_alone_never_wedge_the_engine(tmp_path: Path) -> None:
    stall = Stall(after=2, concurrency=2, log=tmp_path / "engine.log")
    for _ in range(10):
        stall.served(in_flight=1)
    assert not stall.wedged and not (tmp_path / "engine.log").exists()


def test_the_count_under_load_wedges_it_and_logs_the_watchdog_once(tmp_path: Path) -> None:
    log = tmp_path / "engine.log"
    stall = Stall(after=3, concurrency=2, log=log)
    stall.served(in_flight=2)
    stall.served(in_flight=1)  # alone: not counted
    stall.served(in_flight=4)
    assert not stall.wedged
    stall.served(in_flight=2)
    stall.served(in_flight=2)
    assert stall.wedged
    lines = log.read_text().splitlines()
    assert len(lines) == 2
    assert "No available shared memory broadcast block found in 60 seconds" in lines[0]
    assert "[Rank 1] Watchdog caught collective operation timeout" in lines[1]


def test_a_scenario_without_a_stall_never_wedges() -> None:
    stall = Stall(after=None, concurrency=1, log=None)
    for _ in range(100):
        stall.served(in_flight=8)
    assert not stall.wedged


async def test_once_wedged_no_stream_passes_the_gate() -> None:
    stall = Stall(after=1, concurrency=1, log=None)
    await stall.gate()  # running: returns at once
    stall.served(in_flight=1)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(stall.gate(), 0.2)
