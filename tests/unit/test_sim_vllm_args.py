"""The simulated engine's argument parser: exactly the flags its vLLM version knows."""

from sim.fakehost.vllm_args import unrecognized, usage_error

SERVE = ["Qwen/X", "--tensor-parallel-size", "2", "--enable-prefix-caching"]


def test_known_flags_pass_and_an_unknown_one_is_reported_with_its_value():
    assert unrecognized(SERVE, "0.19.1+nv26.05") == []
    assert unrecognized([*SERVE, "--frobnicate", "3"], "0.19.1") == ["--frobnicate", "3"]


def test_a_removed_flag_fails_on_the_versions_without_it():
    assert unrecognized([*SERVE, "--task", "embed"], "0.17.1+a03ca76a.nv26.03") == []
    assert unrecognized([*SERVE, "--task", "embed"], "0.19.1+nv26.05") == ["--task", "embed"]
    assert usage_error(["--task", "embed"]).splitlines()[-1] == (
        "vllm serve: error: unrecognized arguments: --task embed"
    )
