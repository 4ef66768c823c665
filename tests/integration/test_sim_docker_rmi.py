"""The simulator's `docker rmi`, the rollback of a pull step: what moby's engine answers when
the image goes, is unknown, or is still used by a container (sim/fakehost/docker_rmi.py)."""

from __future__ import annotations

import pytest

from tools.deploy.plan.provision import _pull_step
from tools.ssh import SSHPool

NGC = "nvcr.io/nvidia/vllm:26.05-py3"
LISTED = "docker images --format '{{.Repository}}:{{.Tag}} {{.ID}}'"


@pytest.mark.parametrize("cluster", ["fresh-pair"], indirect=True)
async def test_the_pull_steps_rollback_removes_the_pulled_image(pool: SSHPool) -> None:
    step = _pull_step("spark-a", NGC)
    assert (await pool.run("spark-a", step.actions[0], timeout=60)).exit_status == 0

    removed = await pool.run("spark-a", step.rollback, timeout=30)

    assert removed.exit_status == 0, removed.stderr
    lines = removed.stdout.splitlines()
    assert lines[0] == f"Untagged: {NGC}"
    assert lines[1].startswith("Untagged: nvcr.io/nvidia/vllm@sha256:")
    assert len(lines) == 3 and lines[2].startswith("Deleted: sha256:") and len(lines[2]) == 80
    assert NGC not in (await pool.run("spark-a", LISTED, timeout=30)).stdout
    again = await pool.run("spark-a", f"docker image rm {NGC}", timeout=30)
    assert again.exit_status == 1
    assert again.stderr == f"Error response from daemon: No such image: {NGC}\n"


@pytest.mark.parametrize("cluster", ["seed-pair"], indirect=True)
async def test_an_image_a_container_uses_needs_force_and_then_stays_untagged(
    pool: SSHPool,
) -> None:
    """seed-pair's head runs vllm_node (container 9c4f1e2b7a31…) from vllm-node (3b1e5c9a7d20)."""
    refused = await pool.run("spark-a", "docker rmi vllm-node", timeout=30)
    assert refused.exit_status == 1
    assert refused.stderr == (
        'Error response from daemon: conflict: unable to remove repository reference "vllm-node" '
        "(must force) - container 9c4f1e2b7a31 is using its referenced image 3b1e5c9a7d20\n"
    )
    by_id = await pool.run("spark-a", "docker rmi -f 3b1e5c9a7d20", timeout=30)
    assert by_id.stderr == (
        "Error response from daemon: conflict: unable to delete 3b1e5c9a7d20 (cannot be forced) "
        "- image is being used by running container 9c4f1e2b7a31\n"
    )

    forced = await pool.run("spark-a", "docker rmi -f vllm-node", timeout=30)

    assert forced.exit_status == 0
    assert forced.stdout.splitlines()[0] == "Untagged: vllm-node:latest"
    assert "Deleted:" not in forced.stdout
    assert "<none>:<none> 3b1e5c9a7d20" in (await pool.run("spark-a", LISTED, timeout=30)).stdout
