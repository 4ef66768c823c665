"""What a job is doing, read from the cue that says it: a Ray placement group waiting for GPUs
the cluster said it does not have is stuck from the first wait; an image pull followed by the
engine the same command starts is the engine starting (tests/fixtures/jobs/, real captures)."""

from __future__ import annotations

from tests.support.captures import job_capture
from tools.jobs.progress import read_progress

PLACEMENT = "vllm_serve_ray_placement_group_waiting.txt"
PULL_THEN_ENGINE = "docker_pull_vllm_openai_latest_then_vllm_0.19_startup_gpu_mem_error.txt"


def test_a_wait_for_gpus_the_cluster_lacks_is_stuck_at_its_first_wait() -> None:
    first_wait = "\n".join(job_capture(PLACEMENT).splitlines()[:2])

    progress = read_progress("vllm serve m --distributed-executor-backend ray", first_wait)

    assert progress.summary == (
        "stuck waiting: The number of required GPUs exceeds the total number of available GPUs "
        "in the placement group"
    )


def test_the_lack_alone_without_a_wait_is_no_stuck_wait() -> None:
    said = job_capture(PLACEMENT).splitlines()[0]
    assert read_progress("vllm serve m", said).waiting is None


def test_a_pull_then_the_engine_it_starts_reads_as_the_engine() -> None:
    lines = job_capture(PULL_THEN_ENGINE).splitlines()
    before_failing = "\n".join(lines[: next(i for i, x in enumerate(lines) if "ERROR" in x)])
    command = (
        "docker pull vllm/vllm-openai:latest && docker run --gpus all "
        "vllm/vllm-openai:latest --model Qwen/Qwen3-0.6B"
    )

    progress = read_progress(command, before_failing)

    assert progress.kind == "engine" and not progress.ready
    assert progress.facts["image_pulled"] == "vllm/vllm-openai:latest"
    pulling = read_progress(command, "\n".join(lines[:4]))
    assert pulling.kind == "docker_pull" and not pulling.ready
