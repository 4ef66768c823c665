"""Which serve steps are timed, from what, and how the times read."""

from __future__ import annotations

from tools.deploy.proof.readiness import Readiness, Serving, origin, serving
from tools.deploy.steps import DeployStep, StepCheck

CHECK = StepCheck(host="spark-a", command="true", description="-")


def step(command: str, kind: str = "serve") -> DeployStep:
    return DeployStep(kind=kind, id="s", title="s", host="spark-a", actions=[command],
                      check=CHECK, rollback="-")  # fmt: skip


def test_an_engine_started_with_its_container_is_timed_from_the_containers_start() -> None:
    command = (
        "docker run -d --name vllm_head --gpus all nvcr.io/nvidia/vllm:26.05-py3 vllm serve "
        "Qwen/Qwen3-8B --served-model-name qwen --port 8010"
    )
    found = serving(step(command))
    assert found == Serving(8010, "qwen", "vllm_head", exec_in=False)
    assert origin(found).since == "the container's start"


def test_an_engine_execd_into_a_running_container_is_timed_from_its_steps_start() -> None:
    found = serving(step("docker exec node-1 python3 -m sglang.launch_server --model-path m/x"))
    assert found == Serving(8000, "m/x", "node-1", exec_in=True)
    assert origin(found).since == "the serve step's start"


def test_headless_ranks_and_other_steps_are_not_timed() -> None:
    assert serving(step("docker exec node-2 vllm serve m/x --headless --port 8000")) is None
    assert serving(step("docker run -d --name c img sleep infinity", kind="container")) is None


def test_the_line_says_each_mark_or_that_it_was_not_reached() -> None:
    reached = Readiness("the container's start", 41.23, 43.0, 44.06)
    assert reached.line() == (
        "readiness from the container's start: port open 41.2 s, HTTP ready 43.0 s, "
        "first streamed token 44.1 s"
    )
    assert "HTTP ready not reached" in Readiness("the container's start", 12.0).line()
