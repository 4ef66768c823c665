"""What the classifier tells a user: the risk, and reasons that name the part that decided it."""

from __future__ import annotations

import pytest

from agent.safety.shell import Classification, classify_command
from tools.risk.assessment import Risk


def test_reason_names_the_deciding_part_and_where_it_hides():
    verdict = classify_command("ssh spark-b 'docker exec vllm_node sh -c \"rm -rf /models\"'")
    assert verdict == Classification(
        Risk.DESTRUCTIVE,
        ["'rm' deletes files (inside ssh spark-b → docker exec vllm_node → sh -c)"],
    )
    assert verdict.label == "destructive"


def test_worst_part_wins_and_only_its_reasons_are_kept():
    verdict = classify_command("nvidia-smi -L; mkdir /tmp/x; docker stop vllm_node")
    assert verdict.risk == Risk.DESTRUCTIVE
    assert verdict.reasons == ["'docker stop' stops a container"]


def test_read_only_lists_every_part():
    verdict = classify_command("free -h && df -h /")
    assert verdict.risk == Risk.READ_ONLY
    assert verdict.reasons == ["'free' only reads or prints", "'df' only reads or prints"]


def test_unparseable_input_is_mutating_and_says_why():
    verdict = classify_command('echo "oops')
    assert verdict.risk == Risk.MUTATING
    assert verdict.reasons == ["could not parse: unbalanced double quote; treated as mutating"]


def test_unparseable_nested_string_says_where():
    verdict = classify_command("bash -c 'echo \"oops'")
    assert verdict.reasons == [
        "could not parse (inside bash -c): unbalanced double quote; treated as mutating"
    ]


def test_unknown_command_is_mutating():
    assert classify_command("frobnicate --all").reasons == [
        "'frobnicate' is not on the read-only list"
    ]


def test_local_program_with_a_known_name_is_not_trusted():
    assert classify_command("./ls -la").risk == Risk.MUTATING


def test_empty_command_runs_nothing():
    assert classify_command("  ") == Classification(Risk.READ_ONLY, ["nothing to run"])


@pytest.mark.parametrize(
    ("exists", "risk", "reason"),
    [
        (None, Risk.DESTRUCTIVE, "'> out.txt' truncates a possibly existing file"),
        (True, Risk.DESTRUCTIVE, "'> out.txt' truncates an existing file"),
        (False, Risk.MUTATING, "'> out.txt' creates a new file"),
    ],
)
def test_truncating_redirect_depends_on_whether_the_file_exists(exists, risk, reason):
    verdict = classify_command("ls > out.txt", path_exists=lambda path: exists)
    assert verdict == Classification(risk, [reason])


def test_system_paths_stay_destructive_even_when_new():
    verdict = classify_command("echo x > /etc/new.conf", path_exists=lambda path: False)
    assert verdict.risk == Risk.DESTRUCTIVE


def test_variables_set_earlier_in_the_line_are_followed():
    assert classify_command("C=docker; $C rm -f x").risk == Risk.DESTRUCTIVE
    assert classify_command("D=/tmp/x; ls $D").risk == Risk.READ_ONLY


def test_variables_set_in_a_subshell_are_not_trusted_outside_it():
    verdict = classify_command("(D=/dev/null); sort -o $D x")
    assert verdict.risk == Risk.MUTATING
    assert "only known at run time" in verdict.reasons[0]


def test_runtime_arguments_are_harmless_for_commands_that_only_read_them():
    assert classify_command("cat $LOG_FILE").risk == Risk.READ_ONLY


def nested_substitutions(levels: int) -> str:
    command = "ls"
    for _ in range(levels):
        command = f"$(echo {command})"
    return f"echo {command}"


def test_deep_nesting_stops_and_is_mutating():
    verdict = classify_command(nested_substitutions(20))
    assert verdict.risk == Risk.MUTATING
    assert "nested too deeply to follow" in verdict.reasons[0]
    assert classify_command(nested_substitutions(5)).risk == Risk.READ_ONLY


@pytest.mark.parametrize("filler", ["a", "é"])
def test_a_command_longer_than_a_host_runs_is_destructive_unread(filler):
    """Over 128 KiB (as UTF-8) no `sh -c` can take it: not parsed, so it never runs unasked."""
    fits = "echo " + filler * ((128 * 1024 - 5) // len(filler.encode()))
    assert classify_command(fits).risk == Risk.READ_ONLY
    verdict = classify_command(fits + filler)
    assert verdict.risk == Risk.DESTRUCTIVE
    assert verdict.reasons == ["longer than a command line can be (128 KiB); not read"]
