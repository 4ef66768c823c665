"""Ray cluster status and nccl-tests bandwidth: did the nodes join, and is the link fast?"""

import pytest

from tests.support.captures import capture, job_capture
from tools.recon.parsers import (
    ParseError,
    parse_ray_resource_line,
    parse_ray_status,
)
from tools.recon.parsers.nccl import parse_nccl_avg_bus_bandwidth, parse_nccl_rows

GIB = 1024**3


def test_ray_status_two_sparks() -> None:
    status = parse_ray_status(capture("spark_ray_status_2nodes.txt"))
    assert status.running is True
    assert (status.active_node_count, status.node_count, status.pending_nodes) == (2, 2, [])
    assert status.active_nodes[0].startswith("node_a81cfbad")
    gpu, cpu, memory = status.resource("GPU"), status.resource("CPU"), status.resource("memory")
    assert gpu is not None and (gpu.used, gpu.total) == (0.0, 2.0)
    assert cpu is not None and cpu.total == 40.0
    assert memory is not None and memory.total == pytest.approx(218.83 * GIB, rel=1e-6)
    assert status.recent_failures == []


OLD_RAY_STATUS = """\
======== Cluster status: 2024-05-01 10:00:00 ========
Node status
---------------------------------------------------------------
Healthy:
 1 node_aaa
Pending:
 192.168.100.11: ray.worker.default, setting up
Recent failures:
 (no failures)

Resources
---------------------------------------------------------------
Usage:
 20.0/20.0 CPU
 1.0/1.0 GPU (1.0 used of 1.0 reserved in placement groups)
 0.00/109.415 GiB memory

Demands:
 {'GPU': 1.0}: 1+ pending tasks/actors
"""


def test_old_ray_status_usage_form_and_placement_groups() -> None:
    status = parse_ray_status(OLD_RAY_STATUS)
    assert status.active_node_count == 1
    assert status.pending_nodes == ["192.168.100.11: ray.worker.default, setting up"]
    gpu = status.resource("GPU")
    assert gpu is not None
    assert (gpu.used, gpu.total, gpu.placement_group_used, gpu.placement_group_reserved) == (
        1.0,
        1.0,
        1.0,
        1.0,
    )
    memory = status.resource("memory")
    assert memory is not None and memory.total == pytest.approx(109.415 * GIB, rel=1e-6)
    assert status.pending_demands == ["{'GPU': 1.0}: 1+ pending tasks/actors"]


@pytest.mark.parametrize(
    ("line", "used", "total", "reserved"),
    [
        (" 0.0/2.0 GPU", 0.0, 2.0, None),
        (" 2.0/2.0 GPU (2.0 used of 2.0 reserved in placement groups)", 2.0, 2.0, 2.0),
        ("1.0/2.0 GPU (0.0 used of 1.0 reserved in placement groups)", 1.0, 2.0, 1.0),
    ],
)
def test_ray_gpu_line_variants(
    line: str, used: float, total: float, reserved: float | None
) -> None:
    resource = parse_ray_resource_line(line)
    assert resource is not None
    assert (resource.name, resource.used, resource.total) == ("GPU", used, total)
    assert resource.placement_group_reserved == reserved


def test_ray_resource_line_ignores_other_lines() -> None:
    assert parse_ray_resource_line("(no resource demands)") is None


def test_ray_status_counts_idle_nodes() -> None:
    text = (
        "Node status\n-----\nActive:\n (no active nodes)\nIdle:\n 1 node_a\n 1 node_b\n"
        "Pending:\n (no pending nodes)\n\nResources\n-----\nTotal Usage:\n 0.0/2.0 GPU\n"
    )
    status = parse_ray_status(text)
    assert (status.active_node_count, status.idle_node_count, status.node_count) == (0, 2, 2)


def test_ray_not_running_is_a_state_not_an_error() -> None:
    status = parse_ray_status(
        "ConnectionError: Could not find any running Ray instance. Please specify the one to "
        "connect to by setting `--address` flag or `RAY_ADDRESS` environment variable."
    )
    assert status.running is False
    assert status.error is not None and "Could not find any running Ray instance" in status.error


def test_ray_status_rejects_other_text() -> None:
    with pytest.raises(ParseError, match="ray status"):
        parse_ray_status("OCI runtime exec failed: exec failed: unable to start container process")


def test_nccl_avg_bus_bandwidth_healthy_vs_degraded() -> None:
    healthy = parse_nccl_avg_bus_bandwidth(capture("spark_nccl_all_gather_perf_healthy.txt"))
    degraded = parse_nccl_avg_bus_bandwidth(capture("spark_nccl_all_gather_perf_degraded.txt"))
    assert (healthy, degraded) == (21.4033, 2.82151)


def test_nccl_without_summary() -> None:
    text = "# nccl-tests version 2.18.3\nNCCL WARN socket error\n"
    assert parse_nccl_avg_bus_bandwidth(text) is None and parse_nccl_rows(text) == []


def test_ray_status_with_every_gpu_reserved_in_placement_groups() -> None:
    """A real capture while vLLM holds a 2-node cluster (older Usage:/Demands: layout)."""
    status = parse_ray_status(
        job_capture("ray_status_2nodes_16gpu_all_reserved_in_placement_groups.txt")
    )
    assert status.active_node_count == 2
    gpu = status.resource("GPU")
    assert gpu is not None
    assert (gpu.used, gpu.total, gpu.placement_group_used, gpu.placement_group_reserved) == (
        16.0,
        16.0,
        16.0,
        16.0,
    )
