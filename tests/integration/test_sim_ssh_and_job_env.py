"""The simulator's `ssh` between hosts, `docker save | docker load`, and a job's environment.

What the fresh-pair deployment needs from a faithful world: the head copies an image to a worker
without internet with `docker save IMAGE | ssh WORKER docker load`, and a download job gets
HF_TOKEN from its environment (exported by the start script, as on a real host) without the
token showing up in what Scout reads back.
"""

from __future__ import annotations

import pytest

from tools.deploy.rollout.step_jobs import run_step_job
from tools.deploy.steps import DeployStep, StepCheck
from tools.jobs.host import job_log
from tools.ssh import SSHPool

NGC = "nvcr.io/nvidia/vllm:26.05-py3"
MODEL = "Qwen/Qwen3.5-122B-A10B-FP8"
WORKER_IP = "192.168.200.13"  # spark-b on the management network (seed-pair.yaml)
TOKEN = "hf_simGatedToken0123456789abcdef"


@pytest.mark.parametrize("cluster", ["fresh-pair"], indirect=True)
async def test_an_image_goes_to_the_offline_worker_through_ssh(pool: SSHPool) -> None:
    worker_pull = await pool.run("spark-b", f"docker pull {NGC}", timeout=60)
    assert worker_pull.exit_status == 1 and "lookup nvcr.io" in worker_pull.stderr
    assert (await pool.run("spark-a", f"docker pull {NGC}", timeout=60)).exit_status == 0
    copied = await pool.run(
        "spark-a", f"docker save {NGC} | ssh {WORKER_IP} docker load", timeout=60
    )
    assert copied.exit_status == 0, copied.stderr
    assert copied.stdout == f"Loaded image: {NGC}\n"
    listed = await pool.run(
        "spark-b", "docker images --format '{{.Repository}}:{{.Tag}}'", timeout=30
    )
    assert NGC in listed.stdout.splitlines()


@pytest.mark.parametrize("cluster", ["fresh-pair"], indirect=True)
async def test_ssh_returns_the_remote_status_and_fails_like_openssh(pool: SSHPool) -> None:
    remote = await pool.run(
        "spark-a", f"ssh -o BatchMode=yes {WORKER_IP} 'hostname; exit 3'", timeout=30
    )
    assert remote.exit_status == 3
    assert remote.stdout.strip() == "spark-b4ec"
    piped = await pool.run("spark-a", f"echo hello | ssh {WORKER_IP} wc -c", timeout=30)
    assert piped.stdout.strip() == "6"
    nowhere = await pool.run("spark-a", "ssh 10.99.0.1 true", timeout=30)
    assert nowhere.exit_status == 255
    assert nowhere.stderr == "ssh: connect to host 10.99.0.1 port 22: No route to host\n"
    empty = await pool.run("spark-a", "docker load < /dev/null", timeout=30)
    assert empty.exit_status == 1
    assert empty.stderr == "Error response from daemon: unexpected EOF\n"


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["gated-model"], indirect=True)
async def test_a_gated_download_job_gets_hf_token_from_its_environment(pool: SSHPool) -> None:
    step = DeployStep(
        kind="download",
        id="weights:spark-a",
        title=f"download {MODEL}",
        host="spark-a",
        actions=[f"hf download {MODEL}"],
        check=StepCheck(host="spark-a", command="true", expect="", description="downloaded"),
        rollback="rm -rf ~/.cache/huggingface/hub/models--Qwen--Qwen3.5-122B-A10B-FP8",
        job="download-weights",
        operator_env=["HF_TOKEN"],
    )
    seen: list[str] = []
    code, said = await run_step_job(
        pool, step, wait_s=60, report=seen.append, environ={"HF_TOKEN": TOKEN}
    )
    assert code == 0, said
    found = await job_log(
        pool, "spark-a", "download-weights", lines=200, max_bytes=20000, grep=None
    )
    assert found is not None and "GatedRepoError" not in found[1]
    assert "models--Qwen--Qwen3.5-122B-A10B-FP8/snapshots/" in found[1]
    command = await pool.run("spark-a", "cat ~/.scout/jobs/download-weights/command", timeout=30)
    assert TOKEN not in "".join([said, found[1], command.stdout, *seen])


@pytest.mark.parametrize("cluster", ["gated-model"], indirect=True)
async def test_a_gated_download_job_without_the_token_fails_with_the_hubs_error(
    pool: SSHPool,
) -> None:
    step = DeployStep(
        kind="download",
        id="weights:spark-a",
        title=f"download {MODEL}",
        host="spark-a",
        actions=[f"hf download {MODEL}"],
        check=StepCheck(host="spark-a", command="true", expect="", description="downloaded"),
        rollback="true",
        job="download-weights",
        operator_env=["HF_TOKEN"],
    )
    code, said = await run_step_job(pool, step, wait_s=60, report=lambda _: None, environ={})
    assert code == 1 and "GatedRepoError" in said
