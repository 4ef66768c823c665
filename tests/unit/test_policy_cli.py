"""`scout policy classify 'CMD'` as a user types it."""

from __future__ import annotations

from agent.faces.cli import main
from agent.faces.policy import classify_main


def test_prints_label_command_and_reason(capsys):
    assert main(["policy", "classify", "docker rm -f vllm_node"]) == 0
    assert capsys.readouterr().out == (
        "destructive: docker rm -f vllm_node — 'docker rm' removes a container\n"
    )


def test_further_reasons_go_on_their_own_lines(capsys):
    assert classify_main(["ls > a.txt; ls > b.txt"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "destructive: ls > a.txt; ls > b.txt — '> a.txt' truncates a possibly existing file",
        "  also: '> b.txt' truncates a possibly existing file",
    ]


def test_unquoted_words_are_joined_into_one_command(capsys):
    assert classify_main(["nvidia-smi", "-L"]) == 0
    assert capsys.readouterr().out.startswith("read_only: nvidia-smi -L — ")


def test_multi_line_command_is_shown_by_its_first_line(capsys):
    classify_main(["sh <<EOF\nreboot\nEOF"])
    assert capsys.readouterr().out == (
        "destructive: sh <<EOF … — 'reboot' reboots the host (inside sh)\n"
    )


def test_missing_command_is_a_usage_error(capsys):
    assert classify_main(["  "]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "give the command as one quoted argument" in captured.err
