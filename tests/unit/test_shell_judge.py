"""judge_shell: a command judged with the environment and folder ssh_exec would run it in."""

from __future__ import annotations

import pytest

from agent.safety.shell.judge import judge_shell
from tools.risk.assessment import Risk


@pytest.mark.parametrize(
    ("command", "env"),
    [
        ("git status", {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor",
                        "GIT_CONFIG_VALUE_0": "touch /tmp/pwned"}),
        ("ls", {"LD_PRELOAD": "/tmp/evil.so"}),
        ("less /etc/os-release", {"LESSOPEN": "|touch /tmp/pwned %s"}),
        ("sh -c true", {"PS4": "$(touch /tmp/pwned)", "SHELLOPTS": "xtrace"}),
        ("nvidia-smi", {"PATH": "/tmp/evil:/usr/bin"}),
        ("python3 --version", {"PYTHONSTARTUP": "/tmp/x.py"}),
    ],
)  # fmt: skip
def test_a_steering_variable_in_env_needs_approval(command, env):
    found = judge_shell(command, env=env)
    assert found.risk == Risk.MUTATING
    assert found.reason.startswith("env: setting ")


def test_ordinary_variables_keep_a_read_only_command_read_only():
    found = judge_shell("nvidia-smi -L", env={"CUDA_VISIBLE_DEVICES": "0", "HF_HUB_OFFLINE": "1"})
    assert found.risk == Risk.READ_ONLY


def test_a_destructive_command_stays_destructive_whatever_the_env():
    found = judge_shell("rm -rf /data/models", env={"LD_PRELOAD": "/tmp/x.so"})
    assert found.risk == Risk.DESTRUCTIVE and found.reason == "'rm' deletes files"


def test_relative_writes_land_in_cwd():
    assert judge_shell("echo x >> hosts", cwd="/etc").risk == Risk.DESTRUCTIVE
    assert judge_shell("echo x >> hosts", cwd="/tmp/work").risk == Risk.MUTATING
    assert judge_shell("cat hosts", cwd="/etc").risk == Risk.READ_ONLY


def test_a_cd_in_the_command_moves_where_relative_writes_land():
    assert judge_shell("cd /etc && tee -a hosts < /tmp/x").risk == Risk.DESTRUCTIVE
    assert judge_shell("cd /tmp && tee -a notes < /tmp/x").risk == Risk.MUTATING
