"""A sealed requestState opens once, for its own call and principal, before it expires, on the
server that sealed it; anything else is refused with the reason."""

from __future__ import annotations

import base64

import pytest

from agent.mcp.sealed_state import RequestStateSeal, StateRefused, call_digest

CALL = call_digest("rollout_step", {"step": 3})
ME = "ops (local account)"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def sealed(seal: RequestStateSeal, approval_id: str = "abc123") -> str:
    return seal.seal(approval_id=approval_id, digest=CALL, principal=ME)


def test_a_state_opens_once_to_its_approval():
    seal = RequestStateSeal(ttl_s=60)
    state = sealed(seal)
    assert seal.open(state, digest=CALL, principal=ME) == "abc123"
    with pytest.raises(StateRefused, match="used already"):
        seal.open(state, digest=CALL, principal=ME)


def test_the_state_is_opaque_to_the_client():
    state = sealed(RequestStateSeal(ttl_s=60), approval_id="abc123")
    raw = base64.urlsafe_b64decode(state.removeprefix("s1."))
    assert b"abc123" not in raw and ME.encode() not in raw


def test_another_call_or_principal_is_refused_and_the_state_spent():
    seal = RequestStateSeal(ttl_s=60)
    state = sealed(seal)
    other = call_digest("rollout_step", {"step": 4})
    with pytest.raises(StateRefused, match="another call"):
        seal.open(state, digest=other, principal=ME)
    with pytest.raises(StateRefused, match="used already"):  # a probe burns it
        seal.open(state, digest=CALL, principal=ME)
    with pytest.raises(StateRefused, match="another principal"):
        seal.open(sealed(seal), digest=CALL, principal="someone else")


def test_an_expired_state_is_refused():
    clock = Clock()
    seal = RequestStateSeal(ttl_s=60, clock=clock)
    state = sealed(seal)
    clock.now += 61
    with pytest.raises(StateRefused, match="expired"):
        seal.open(state, digest=CALL, principal=ME)


def test_a_state_from_elsewhere_or_altered_does_not_open():
    seal = RequestStateSeal(ttl_s=60)
    state = sealed(seal)
    raw = bytearray(base64.urlsafe_b64decode(state.removeprefix("s1.")))
    raw[-1] ^= 1
    flipped = "s1." + base64.urlsafe_b64encode(bytes(raw)).decode()
    forged = [
        flipped,
        sealed(RequestStateSeal(ttl_s=60)),  # another server's key
        state.removeprefix("s1."),
        "s1.",
        "s1.!!!",
        '{"approval_id": "abc123"}',
    ]
    for token in forged:
        with pytest.raises(StateRefused, match="not one this server sealed"):
            seal.open(token, digest=CALL, principal=ME)
    assert seal.open(state, digest=CALL, principal=ME) == "abc123"


def test_the_call_digest_is_the_exact_input():
    assert call_digest("t", {"a": 1, "b": 2}) == call_digest("t", {"b": 2, "a": 1})
    assert call_digest("t", {"a": 1}) != call_digest("t", {"a": "1"})
    assert call_digest("t", {"a": 1}) != call_digest("u", {"a": 1})
