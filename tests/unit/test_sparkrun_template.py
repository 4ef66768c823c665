"""sparkrun's template step (vpd's arg_substitute to a fixpoint), against str.format's."""

from __future__ import annotations

from tools.deploy.recipe_book.runner_template import fill
from tools.deploy.recipe_book.sparkrun_template import (
    fill_lenient,
    serve_part,
    unfilled,
    written_command,
)

JSON = """vllm serve {model} --speculative-config '{{"method":"mtp"}}'"""


def test_double_braces_are_no_escape_and_a_missing_key_stays_as_written():
    assert (
        fill_lenient(JSON, {"model": "m"})
        == """vllm serve m --speculative-config '{{"method":"mtp"}}'"""
    )
    assert fill(JSON, {"model": "m"}) == """vllm serve m --speculative-config '{"method":"mtp"}'"""
    assert fill_lenient("vllm serve {model} --seed {seed}", {"model": "m"}) == (
        "vllm serve m --seed {seed}"
    )


def test_values_are_filled_until_nothing_changes_and_a_spaced_continuation_is_mended():
    filled = fill_lenient("vllm serve {model} \\  \n --x {a}", {"model": "m", "a": "{b}", "b": 7})
    assert filled == "vllm serve m \\\n --x 7"


def test_a_self_referring_value_stops_instead_of_looping():
    assert fill_lenient("--x {a}", {"a": "{a}"}) == "--x {a}"


def test_only_names_left_unfilled_are_reported_not_the_json_a_value_carries():
    rendered = fill_lenient("--s '{spec}' --seed {seed}", {"spec": '{"method":"mtp"}'})
    assert unfilled(rendered) == ["{seed}"]


def test_a_recipe_without_command_gets_the_runtimes_flags_from_its_defaults():
    written = written_command("vllm", {"kv_cache_dtype": "fp8", "trust_remote_code": True})
    assert written == (
        "vllm serve {model} -tp {tensor_parallel} --port {port} --host {host} "
        "--trust-remote-code --kv-cache-dtype {kv_cache_dtype}"
    )
    assert "--enforce-eager" not in written_command("vllm", {"enforce_eager": False})
    assert written_command("sglang", {"max_model_len": 4096}).startswith(
        "python3 -m sglang.launch_server --model-path {model} --tp-size {tensor_parallel}"
    )
    assert "--context-length {max_model_len}" in written_command("sglang", {"max_model_len": 1})


def test_the_engine_statement_of_a_command_script_is_found_and_the_rest_named():
    serve, rest = serve_part(
        'export A="1";\n# why\nexec /usr/bin/vllm serve m \\\n  --port {port}\n'
    )
    assert serve == "/usr/bin/vllm serve m \\\n  --port {port}"
    assert rest == ['export A="1"']
    assert serve_part("vllm serve m") == ("vllm serve m", [])
