"""The simulator's `git clone`: a repository the plan clones arrives where the host reaches the
internet, and fails with git's own lines where it does not or GitHub has no such repository
(sim/fakehost/git.py)."""

from __future__ import annotations

import pytest

from tools.deploy.launch.image_build import RUNNER_REPOSITORY, build_step
from tools.deploy.rollout.step_jobs import run_step_job
from tools.ssh import SSHPool

IMAGE = "vllm-node-b12x"


@pytest.mark.parametrize("cluster", ["fresh-pair"], indirect=True)
async def test_a_head_without_internet_fails_the_build_with_gits_own_line(pool: SSHPool) -> None:
    step = build_step("spark-b", IMAGE, f"./build-and-copy.sh -t {IMAGE}")

    code, said = await run_step_job(pool, step, wait_s=60, report=lambda _: None)

    assert code not in (0, None)
    assert "Could not resolve host: github.com" in said


@pytest.mark.parametrize("cluster", ["fresh-pair"], indirect=True)
async def test_a_clone_arrives_with_the_runners_files_or_names_a_missing_repository(
    pool: SSHPool,
) -> None:
    cloned = await pool.run("spark-a", f"git clone --depth 1 {RUNNER_REPOSITORY} r", timeout=30)
    assert cloned.exit_status == 0 and cloned.stderr == "Cloning into 'r'...\n"
    script = await pool.run("spark-a", "test -f r/build-and-copy.sh && test -d r/.git", timeout=30)
    assert script.exit_status == 0, script.stderr
    again = await pool.run("spark-a", f"git clone {RUNNER_REPOSITORY} r", timeout=30)
    assert again.exit_status == 128
    assert "fatal: destination path 'r' already exists" in again.stderr
    missing = await pool.run("spark-a", "git clone https://github.com/no/such.git", timeout=30)
    assert missing.exit_status == 128
    assert missing.stderr.endswith(
        "fatal: repository 'https://github.com/no/such.git/' not found\n"
    )
