"""The endpoint check as a call: the soak a session gives a call that names none, and the one
line a plan names it by."""

from __future__ import annotations

from tools.deploy.proof.call import EndpointCheckInput, proof_command, proof_soak_s, proof_step

MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"


def test_real_hosts_soak_thirty_minutes_and_the_simulator_none() -> None:
    assert proof_soak_s(simulated=False) == 1800.0 and proof_soak_s(simulated=True) == 0.0


def test_a_call_without_a_soak_takes_the_sessions_and_an_asked_one_is_kept() -> None:
    unasked = EndpointCheckInput(host="spark-a", model=MODEL)
    assert unasked.soak_s is None and unasked.soak() is None
    real = unasked.with_soak(proof_soak_s(simulated=False))
    assert real.soak() is not None and (real.soak().seconds, real.soak().concurrency) == (1800, 16)
    assert proof_command(real).endswith(" soak=1800s c=16")
    refused = EndpointCheckInput(host="spark-a", model=MODEL, soak_s=0).with_soak(1800.0)
    assert refused.soak() is None and "soak=" not in proof_command(refused)  # the operator's 0


def test_the_plans_proof_names_the_soak_it_holds() -> None:
    step = proof_step("spark-a", 8000, MODEL, soak_s=1800.0)
    call = EndpointCheckInput(host="spark-a", port=8000, model=MODEL).with_soak(1800.0)
    assert step.actions == [proof_command(call)]
    assert step.expected_downtime.endswith("then a soak of 30 min)")
    quiet = proof_step("spark-a", 8000, MODEL)
    assert "soak=" not in quiet.actions[0] and "soak" not in quiet.expected_downtime
