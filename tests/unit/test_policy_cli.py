"""`scout policy classify 'CMD'` as a user types it."""

from __future__ import annotations

import json

import pytest

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


def test_classify_file_prints_label_tab_command_per_line_in_order(tmp_path, capsys):
    listing = tmp_path / "commands.txt"
    listing.write_text("nvidia-smi -L\n\nsort --out=/etc/x\nmkdir /tmp/x\n")
    assert main(["policy", "classify", "--file", str(listing)]) == 0
    assert capsys.readouterr().out == (
        "read_only\tnvidia-smi -L\ndestructive\tsort --out=/etc/x\nmutating\tmkdir /tmp/x\n"
    )


def test_classify_file_that_cannot_be_read_is_a_usage_error(tmp_path, capsys):
    assert main(["policy", "classify", "--file", str(tmp_path / "none.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err


def check(capsys, call, *flags):
    assert main(["policy", "check", "--call", json.dumps(call), *flags]) == 0
    return capsys.readouterr().out


ENV_CASES = {
    "GIT_CONFIG_*": ("git status", {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0":
                                    "core.fsmonitor", "GIT_CONFIG_VALUE_0": "touch /tmp/x"}),
    "LD_PRELOAD": ("ls /", {"LD_PRELOAD": "/tmp/evil.so"}),
    "LESSOPEN": ("less /etc/os-release", {"LESSOPEN": "|touch /tmp/x %s"}),
    "PS4+SHELLOPTS": ("sh -c true", {"PS4": "$(touch /tmp/x)", "SHELLOPTS": "xtrace"}),
    "PATH": ("nvidia-smi", {"PATH": "/tmp/evil:/usr/bin"}),
}  # fmt: skip


@pytest.mark.parametrize("case", ENV_CASES)
def test_check_shows_a_steering_env_needs_approval(capsys, case):
    command, env = ENV_CASES[case]
    call = {"tool": "ssh_exec", "input": {"host": "spark-a", "command": command, "env": env}}
    line = check(capsys, call)
    assert line.startswith("mutating ask — ") and "env: setting" in line
    plain = {"tool": "ssh_exec", "input": {"host": "spark-a", "command": command}}
    assert check(capsys, plain).startswith("read_only allow — ")


RESTART = {"tool": "ssh_exec", "input": {"host": "spark-a", "command": "docker restart vllm_node"}}


def test_check_a_session_rule_from_restart_does_not_allow_more(capsys):
    answered = ["--session-allow", json.dumps(RESTART)]
    assert check(capsys, RESTART, *answered).startswith("mutating allow — allowed by ")
    chained_command = "docker restart vllm_node; curl x | sh"
    chained = {"tool": "ssh_exec", "input": {"host": "spark-a", "command": chained_command}}
    assert check(capsys, chained, *answered).startswith("mutating ask — ")


def test_check_a_pull_rule_does_not_allow_a_privileged_run(capsys):
    pull = {"tool": "docker_ctl", "input": {"host": "spark-a", "action": "pull",
                                            "image": "nvcr.io/nvidia/vllm:26.05-py3"}}  # fmt: skip
    answered = ["--session-allow", json.dumps(pull)]
    assert check(capsys, pull, *answered).startswith("mutating allow — ")
    run = {"tool": "docker_ctl", "input": {"host": "spark-a", "action": "run",
                                           "image": "nvcr.io/nvidia/vllm:26.05-py3",
                                           "privileged": True, "volumes": ["/:/host"]}}  # fmt: skip
    line = check(capsys, run, *answered)
    assert line.startswith("destructive ask — ") and "--privileged" in line


def test_check_with_rules_and_modes(capsys):
    call = {"tool": "ssh_exec", "input": {"host": "spark-a", "command": "nvidia-smi -pm 1"}}
    rule = ["--allow", 'ssh_exec(host=spark-*, command="nvidia-smi -pm *")']
    assert check(capsys, call, *rule, "--mode", "auto-safe").startswith("mutating allow")
    assert check(capsys, call, *rule).startswith("mutating ask")  # ask mode: settings rules ask
    assert check(capsys, call, "--mode", "ci").startswith("mutating deny — needs a human")
    denied = check(capsys, call, "--deny", 'ssh_exec(command="nvidia-smi *")')
    assert denied.startswith("mutating deny — denied by rule")
    wider = {"tool": "ssh_exec", "input": {"host": "spark-a", "command": "nvidia-smi drain -r 1"}}
    assert check(capsys, wider, *rule, "--mode", "auto-safe").split(" — ")[0].endswith("ask")


@pytest.mark.parametrize(
    ("flags", "problem"),
    [
        (["--call", "{not json"], "--call is not JSON"),
        (["--call", '{"tool": "frobnicate", "input": {}}'], "known: ssh_exec, docker_ctl"),
        (["--call", '{"tool": "ssh_exec", "input": {"command": "ls"}}'], "Invalid input"),
        (["--call", json.dumps(RESTART), "--allow", "ssh_exec(host spark)"], "expected field"),
        (["--call", json.dumps(RESTART), "--allow", "docker_ctl(host=a)"], "name the action"),
    ],
)
def test_check_explains_what_it_cannot_judge(capsys, flags, problem):
    assert main(["policy", "check", *flags]) == 2
    assert problem in capsys.readouterr().err
