"""The host's wall is built whole or not at all: every arch's filter assembles, and a kernel too
old for scoped signals gets no half wall (the command falls back to restricted bash)."""

from __future__ import annotations

import pytest

from sim.fakehost import confinement, landlock, seccomp


@pytest.mark.parametrize("arch", sorted(seccomp.ARCHES))
def test_the_filter_assembles_for_every_arch(arch: str) -> None:
    program = seccomp.build(seccomp.ARCHES[arch])

    assert len(program) % 8 == 0 and 0 < len(program) // 8 < 256


def test_a_kernel_without_scoped_signals_gets_no_command_wall(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(landlock, "abi_version", lambda: 5)

    with pytest.raises(confinement.ConfineError, match="Landlock ABI 5"):
        confinement.command_ruleset("/nonexistent", [])


def test_a_ruleset_asking_more_than_the_abi_has_is_refused_before_anything_applies() -> None:
    ruleset = landlock.Ruleset(4, landlock.WRITE_FILE, scoped=landlock.SCOPE_SIGNAL)

    with pytest.raises(landlock.LandlockError, match="ABI 4 cannot"):
        ruleset.restrict_self()
