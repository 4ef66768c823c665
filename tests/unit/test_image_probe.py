"""Asking images what they hold: the command, and reading pip show's answer per image, and the
NCCL its torch links (`torch.cuda.nccl.version()`, printed as `NCCL version X.Y.Z`)."""

from __future__ import annotations

from tools.recon.image_probe import apply_contents, contents_command, parse_contents
from tools.world.facts import DockerFacts, Image, ImageContents

# As the simulator and pip print it: blocks per found package (pip/_internal/commands/show.py),
# the not-found warning merged in, and an image without python3 answering with the runtime error.
ANSWER = """image nvcr.io/nvidia/vllm:26.05-py3
NCCL version 2.28.9
Name: vllm
Version: 0.19.1+nv26.05
Summary: A high-throughput and memory-efficient inference and serving engine for LLMs
Location: /usr/local/lib/python3.12/dist-packages
WARNING: Package(s) not found: ray, sglang
image vllm-node:latest
NCCL version 2.30.3.1
Name: ray
Version: 2.49.1
---
Name: vllm
Version: 0.10.2
WARNING: Package(s) not found: sglang
image ray-only:latest
Traceback (most recent call last):
  File "<string>", line 1, in <module>
ModuleNotFoundError: No module named 'torch'
Name: ray
Version: 2.49.1
WARNING: Package(s) not found: sglang, vllm
image busybox:latest
docker: Error response from daemon: failed to create task for container: exec: "python3": \
executable file not found in $PATH: unknown.
"""


def test_each_image_is_run_without_network_and_removed() -> None:
    command = contents_command(["nvcr.io/nvidia/vllm:26.05-py3", "vllm-node:latest"])
    assert command.count("docker run --rm --network none --entrypoint python3 ") == 4
    assert "echo 'image vllm-node:latest'; docker run" in command
    assert command.count("torch.cuda.nccl.version()") == 2
    assert command.endswith("-m pip show ray vllm sglang 2>&1")  # its status is the line's


def test_answers_become_contents_and_silence_stays_unknown() -> None:
    found = parse_contents(ANSWER)
    assert found == {
        "nvcr.io/nvidia/vllm:26.05-py3": ImageContents(vllm="0.19.1+nv26.05", nccl="2.28.9"),
        "vllm-node:latest": ImageContents(ray="2.49.1", vllm="0.10.2", nccl="2.30.3"),
        "ray-only:latest": ImageContents(ray="2.49.1"),
    }
    docker = DockerFacts(
        images=[
            Image(repository="vllm-node", tag="latest"),
            Image(repository="busybox", tag="latest"),
        ]
    )
    apply_contents(docker, found)
    assert [i.contents for i in docker.images] == [
        ImageContents(ray="2.49.1", vllm="0.10.2", nccl="2.30.3"),
        None,
    ]


def test_contents_read_what_the_image_holds_first() -> None:
    assert ImageContents(vllm="0.19.1+nv26.05").words() == "vllm 0.19.1+nv26.05, no ray/sglang"
    assert (
        ImageContents(ray="2.49.1", vllm="0.10.2").words() == "ray 2.49.1, vllm 0.10.2, no sglang"
    )
    assert ImageContents().words() == "no ray/vllm/sglang"
    assert ImageContents(vllm="0.20.1", nccl="2.28.9").words() == (
        "vllm 0.20.1, nccl 2.28.9, no ray/sglang"
    )  # an unknown NCCL is not said
