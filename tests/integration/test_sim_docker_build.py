"""The plan's image build on the simulator: the head clones spark-vllm-docker and runs its build
script as a job, whose `docker build` shows BuildKit's progress and leaves the image listed
(sim/fakehost/docker_build.py)."""

from __future__ import annotations

import pytest

from tools.deploy.launch.image_build import build_step
from tools.deploy.rollout.step_jobs import run_step_job
from tools.jobs.progress.readers import read_progress
from tools.ssh import SSHPool

IMAGE = "vllm-node-b12x"


@pytest.mark.parametrize("cluster", ["fresh-pair"], indirect=True)
async def test_the_build_step_builds_the_image_as_a_job_with_progress(pool: SSHPool) -> None:
    step = build_step("spark-a", IMAGE, f"./build-and-copy.sh -t {IMAGE} --exp-b12x")
    seen: list[str] = []

    code, said = await run_step_job(pool, step, wait_s=120, report=seen.append)

    assert code == 0, said
    listed = await pool.run("spark-a", step.check.command, timeout=30)
    log = await pool.run("spark-a", "cat ~/.scout/jobs/build-image/log", timeout=30)
    assert step.check.passes(listed.exit_status, listed.stdout), log.stdout
    assert "Building runner image with command: docker build -t vllm-node-b12x" in log.stdout
    progress = read_progress(step.actions[0], log.stdout, "")
    assert progress.summary == f"built {IMAGE}:latest"
    assert progress.facts["steps_done"] == progress.facts["steps_total"] == 5


@pytest.mark.parametrize("cluster", ["fresh-pair"], indirect=True)
async def test_docker_build_without_a_dockerfile_fails_as_docker_does(pool: SSHPool) -> None:
    result = await pool.run("spark-a", "mkdir -p empty && docker build -t x empty", timeout=30)

    assert result.exit_status == 1
    assert result.stderr == (
        "ERROR: failed to build: failed to solve: failed to read dockerfile: open Dockerfile: "
        "no such file or directory\n"
    )
