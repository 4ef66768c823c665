"""The bad builds of scenario upgrade-pair fail as their sources show (sim/SOURCES.md, "Failed
upgrades"): seen through SSH, as Scout sees them."""

from __future__ import annotations

import pytest

from tools.ssh import SSHPool

pytestmark = pytest.mark.slow

RUN = "docker run -d --name {name} --gpus all -v ~/.cache/huggingface:/root/.cache/huggingface {image} sleep infinity"  # noqa: E501


@pytest.mark.parametrize("cluster", ["upgrade-pair"], indirect=True)
async def test_an_amd64_image_on_a_spark_exits_with_exec_format_error(cluster, pool: SSHPool):
    assert (await pool.run("spark-a", "docker pull scout-sim/vllm:amd64-only")).exit_status == 0
    started = await pool.run("spark-a", RUN.format(name="t", image="scout-sim/vllm:amd64-only"))
    assert started.exit_status == 0  # -d returns the id; the container dies at once
    assert "does not match the detected host platform (linux/arm64/v8)" in started.stderr
    ps = await pool.run("spark-a", "docker ps -a --format '{{.Names}} {{.Status}}'")
    assert "t Exited (255)" in ps.stdout
    logs = await pool.run("spark-a", "docker logs t")
    assert "exec /usr/bin/sleep: exec format error" in logs.stdout + logs.stderr


@pytest.mark.parametrize("cluster", ["upgrade-pair"], indirect=True)
async def test_a_build_that_cannot_read_the_weights_exits_with_safetensors_error(cluster, pool):
    assert (await pool.run("spark-a", "docker pull scout-sim/vllm:bad-loader")).exit_status == 0
    started = await pool.run("spark-a", RUN.format(name="t", image="scout-sim/vllm:bad-loader"))
    assert started.exit_status == 0, started.stderr
    served = await pool.run(
        "spark-a", "docker exec t vllm serve Qwen/Qwen3-30B-A3B-FP8 --gpu-memory-utilization 0.4"
    )
    assert served.exit_status == 1
    assert served.stderr.strip().endswith(
        "safetensors_rust.SafetensorError: Error while deserializing header: "
        "MetadataIncompleteBuffer"
    )
