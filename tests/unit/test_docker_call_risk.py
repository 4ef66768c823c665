"""docker_ctl judged as a whole call: the action, every flag that reaches the host, the command."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from agent.safety.approvals import ApprovalRequest
from agent.safety.approvers.terminal import TerminalApprover
from agent.safety.shell.judge import judge_shell
from tools.docker.params import DockerCtlInput
from tools.docker.risk import docker_call_risk
from tools.risk.assessment import Risk


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


# --- mounts and devices are allow-lists (issue 25.6): generated per class ----------------------
HOMES = ["~", "$HOME", "${HOME}", "/root", "/home/aurora", "/home/ops"]
DATA_ROOTS = ["/data", "/mnt", "/srv", "/scratch", "/raid", "~", "/home/aurora", "/nfs/team"]
MODEL_WORDS = ["models", "model", "weights", "checkpoints", "hf_cache", "huggingface"]


def allowed_mounts():
    for home in HOMES:
        for tail in ("", "/hub", "/hub/models--Qwen--Qwen3-8B", "/"):
            yield f"{home}/.cache/huggingface{tail}:/root/.cache/huggingface"
    for root in DATA_ROOTS:
        for word in MODEL_WORDS:
            yield f"{root}/{word}:/models:ro"
            yield f"{root}/{word}/Qwen3.5-122B:/model"
    for name in ("hf-cache", "vllm_compile_cache", "models", "data01"):
        yield f"{name}:/cache"
        yield f"type=volume,source={name},target=/cache,readonly"
    yield "/data"  # an anonymous volume at the container's /data
    yield "type=tmpfs,target=/scratch,tmpfs-size=1g"
    yield "type=bind,source=/data/models,target=/models,readonly"
    yield "/etc/localtime:/etc/localtime:ro"


SOCKETS = ["/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock",
           "/var/run/crio/crio.sock", "/run/podman/podman.sock", "/run/dbus/system_bus_socket",
           "/var/run/dbus/system_bus_socket", "/run/systemd/private", "/run/snapd.socket",
           "/run/user/1000/bus", "/var/run/nvidia-persistenced/socket"]  # fmt: skip
HOST_TREES = ["/", "/etc", "/root", "/boot", "/usr", "/lib/modules", "/sys", "/proc", "/dev",
              "/run/systemd", "/var/lib/docker", "/var/log", "/home", "/tmp", "/opt/tools",
              "/srv/app", "/var/lib/kubelet/pods"]  # fmt: skip


def forbidden_mounts():
    for path in SOCKETS + HOST_TREES:
        yield f"{path}:/x", path
        yield f"type=bind,source={path},target=/x", path
    for home in HOMES:
        yield f"{home}/.ssh:/keys:ro", ".ssh"
        yield f"{home}/.cache/huggingface/../../.ssh:/k", ".ssh"
        yield f"{home}:/h", "home"
    for root in DATA_ROOTS[:3]:
        yield f"{root}/models/../../etc:/e", "/etc"
        yield f"/{root}//models/../../../var/run/docker.sock:/s", "docker.sock"
    yield "$PWD:/w", "$PWD"
    yield "./models:/m", "./models"
    yield "type=volume,source=v,target=/v,volume-opt=device=/,volume-opt=o=bind", "volume-opt"
    yield "type=npipe,source=x,target=/x", "npipe"


@pytest.mark.parametrize("spec", list(allowed_mounts()))
def test_named_volumes_the_hf_cache_and_model_folders_are_allowed(spec):
    found = judged(action="run", image="i", volumes=[spec])
    assert found.risk == Risk.MUTATING, found.reason


@pytest.mark.parametrize(("spec", "named"), list(forbidden_mounts()))
def test_any_other_host_path_is_destructive_and_named(spec, named):
    found = judged(action="run", image="i", volumes=[spec])
    assert found.risk == Risk.DESTRUCTIVE
    assert named in found.reason


GPU_DEVICES = ["/dev/nvidia0", "/dev/nvidia7", "/dev/nvidiactl", "/dev/nvidia-uvm",
               "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset", "/dev/infiniband",
               "/dev/infiniband/uverbs0", "/dev/infiniband/rdma_cm", "nvidia.com/gpu=all",
               "nvidia.com/gpu=0", "/dev/nvidia0:/dev/nvidia0:rwm"]  # fmt: skip
OTHER_DEVICES = ["/dev/sda", "/dev/sdb1", "/dev/nvme0n1", "/dev/nvme1n1p2", "/dev/sg0",
                 "/dev/bsg/0:0:0:0", "/dev/ipmi0", "/dev/mem", "/dev/kmsg", "/dev/loop0",
                 "/dev/mapper/root", "/dev/md0", "/dev/nvidia-caps/nvidia-cap1", "/dev/fuse",
                 "/dev/kvm", "/dev/net/tun", "/dev/dri/card0", "/dev/watchdog",
                 "/dev/nvidia0/../sda", "/dev//infiniband/../sda",
                 "vendor.com/device=x"]  # fmt: skip


@pytest.mark.parametrize("device", GPU_DEVICES)
def test_gpu_and_rdma_devices_are_allowed(device):
    assert judged(action="run", image="i", devices=[device]).risk == Risk.MUTATING


@pytest.mark.parametrize("device", OTHER_DEVICES)
def test_any_other_device_is_destructive(device):
    found = judged(action="run", image="i", devices=[device])
    assert found.risk == Risk.DESTRUCTIVE and "gives the container the host's" in found.reason


def test_the_shell_classifier_reads_docker_run_with_the_same_lists():
    assert judge_shell("docker run -v /run/containerd/containerd.sock:/c img").risk == (
        Risk.DESTRUCTIVE
    )
    assert judge_shell("docker run --device /dev/ipmi0 img").risk == Risk.DESTRUCTIVE
    assert judge_shell("docker run -v /data/models:/m --device /dev/nvidia0 img").risk == (
        Risk.MUTATING
    )


async def test_the_approval_panel_says_why_in_words():
    fields = {"action": "run", "image": "i", "volumes": ["/run/containerd/containerd.sock:/c"]}
    found = judged(**fields)
    request = ApprovalRequest(id="r", fingerprint="f", tool="docker_ctl",
                              input={"host": "spark-a", **fields}, hosts=["spark-a"],
                              risk=found.risk.label, reason=found.reason)  # fmt: skip
    out = io.StringIO()

    async def answer(prompt):
        return "n"

    await TerminalApprover(Console(file=out, width=80), answer).decide(request)
    screen = " ".join(line.strip(" │") for line in out.getvalue().splitlines())
    assert "destructive" in screen and "containerd.sock" in screen
    assert "control socket: whoever holds it commands the host's containers" in screen
