"""docker_ctl judged as a whole call: the action, every flag that reaches the host, the command."""

from __future__ import annotations

import pytest

from agent.safety.shell.judge import judge_shell
from tools.base import Risk
from tools.docker.params import DockerCtlInput
from tools.docker.risk import docker_call_risk


def judged(**fields: object):
    params = DockerCtlInput.model_validate({"host": "spark-a", **fields})
    return docker_call_risk(params, judge_shell)


@pytest.mark.parametrize(
    ("fields", "risk"),
    [
        ({"action": "ps"}, Risk.READ_ONLY),
        ({"action": "logs", "container": "vllm_node"}, Risk.READ_ONLY),
        ({"action": "pull", "image": "nvcr.io/nvidia/vllm:26.05-py3"}, Risk.MUTATING),
        ({"action": "restart", "container": "vllm_node"}, Risk.MUTATING),
        ({"action": "stop", "container": "vllm_node"}, Risk.DESTRUCTIVE),
        ({"action": "run", "image": "i", "volumes": ["~/.cache/huggingface:/root/.cache/hf"]},
         Risk.MUTATING),
        ({"action": "run", "image": "i", "privileged": True}, Risk.DESTRUCTIVE),
        ({"action": "run", "image": "i", "volumes": ["/:/host"]}, Risk.DESTRUCTIVE),
        ({"action": "run", "image": "i", "volumes": ["/etc:/host-etc:ro"]}, Risk.DESTRUCTIVE),
        ({"action": "run", "image": "i", "volumes": ["/root/.ssh:/keys"]}, Risk.DESTRUCTIVE),
        ({"action": "run", "image": "i", "volumes": ["/var/run/docker.sock:/s"]},
         Risk.DESTRUCTIVE),
        ({"action": "run", "image": "i", "devices": ["/dev/nvme0n1"]}, Risk.DESTRUCTIVE),
        ({"action": "run", "image": "i", "devices": ["/dev/infiniband"]}, Risk.MUTATING),
        ({"action": "exec", "container": "c", "command": "nvidia-smi -L"}, Risk.MUTATING),
        ({"action": "exec", "container": "c", "command": ["sh", "-c", "--", "rm -rf /data"]},
         Risk.DESTRUCTIVE),
        ({"action": "exec", "container": "c", "command": ["sh", "-c", "rm -rf /data"]},
         Risk.DESTRUCTIVE),
    ],
)  # fmt: skip
def test_the_whole_call_decides(fields, risk):
    assert judged(**fields).risk == risk


def test_exec_of_a_read_only_command_is_still_the_action_floor():
    found = judged(action="exec", container="c", command=["cat", "/etc/os-release"])
    assert found.risk == Risk.MUTATING and found.reason == "docker exec is mutating"


def test_reasons_name_the_flag_and_the_inner_command():
    assert "--privileged" in judged(action="run", image="i", privileged=True).reason
    exec_rm = judged(action="exec", container="c", command=["sh", "-c", "--", "rm -rf /x"])
    assert exec_rm.reason == "'rm' deletes files (inside sh -c) (inside docker exec c)"


def test_a_steering_variable_in_exec_env_is_judged():
    found = judged(action="exec", container="c", command="ls", env={"LD_PRELOAD": "/tmp/x.so"})
    assert found.risk == Risk.MUTATING and "LD_PRELOAD" in found.reason
