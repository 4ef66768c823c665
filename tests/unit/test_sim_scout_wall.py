"""The simulator's tools reach only the TCP ports Scout's wall names, once the caller is walled."""

from __future__ import annotations

import os

import pytest

from sim.fakehost.scout_wall import WALLED_ENV, caller_walled, walled_out


def test_a_walled_caller_reaches_only_the_ports_its_wall_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(WALLED_ENV, raising=False)
    assert not walled_out(9000)  # not walled: the wall has nothing to say
    monkeypatch.setenv(WALLED_ENV, "1")
    monkeypatch.setenv("SCOUT_WALL", "landlock-abi-7,seccomp,no-new-privs,tcp-8000-6379")
    assert (walled_out(8000), walled_out(6379), walled_out(9000)) == (False, False, True)
    monkeypatch.setenv("SCOUT_WALL", "landlock-abi-7,seccomp,no-new-privs")
    assert walled_out(8000)


def test_this_process_is_not_inside_scouts_wall() -> None:
    assert caller_walled(os.getpid()) is False
