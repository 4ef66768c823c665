"""Errors by meaning on real failures: the fabric's transport failures and every engine family's
out-of-memory words are errors at any level, the root cause is kept, and lines a terminal
wrapped or a backslash continued are read whole (tests/fixtures/jobs/, each with its source)."""

from __future__ import annotations

import pytest

from tests.support.captures import job_capture
from tools.jobs.progress import read_progress
from tools.jobs.progress.errors import first_error

CASES = [
    (
        "nccl_net_ib_completion_status12_vendor_err129_recv.txt",
        "NCCL WARN NET/IB : Got completion from peer 10.216.210.236<54862> with status=12",
    ),
    (
        "trtllm_failed_to_deserialize_engine_after_cuda_out_of_memory.txt",
        "[defaultAllocator.cpp::allocate::31] Error Code 1: Cuda Runtime (out of memory)",
    ),
    (
        "vllm_compose_kv_cache_no_available_memory_for_cache_blocks.txt",
        "ValueError: No available memory for the cache blocks.",
    ),
    (
        "vllm_v1_cuda_graph_capture_runtime_error_out_of_memory.txt",
        "RuntimeError: CUDA error: out of memory",
    ),
    (
        "ucx_ib_mlx5_transport_retry_count_exceeded.txt",
        "Transport retry count exceeded on mlx5_0:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)",
    ),
    (
        "sglang_tp_gloo_connection_closed_by_peer.txt",
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed",
    ),
    (
        "torch_nccl_watchdog_collective_operation_timeout.txt",
        "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7753",
    ),
    (
        "llamacpp_load_cudamalloc_out_of_memory_unable_to_allocate_buffer.txt",
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: "
        "cudaMalloc failed: out of memory",
    ),
    (
        "ollama_compose_cudamalloc_oom_then_go_panic.txt",
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 35533.34 MiB on device 0: "
        "cudaMalloc failed: out of memory",
    ),
]


@pytest.mark.parametrize(("name", "error"), CASES)
def test_a_fabric_or_memory_failure_is_the_jobs_error(name: str, error: str) -> None:
    progress = read_progress("", job_capture(name))
    assert progress.error is not None and progress.error.startswith(error), progress
    assert progress.summary.startswith("failed: ")


def test_a_vague_last_error_keeps_the_memory_failure_as_its_cause() -> None:
    lines = job_capture("trtllm_failed_to_deserialize_engine_after_cuda_out_of_memory.txt")
    # the runtime's Python binding ends the log with its own exception (its usual last line)
    ended = lines + "RuntimeError: Failed to deserialize cuda engine\n"
    error = first_error(ended.splitlines())
    assert error == (
        "RuntimeError: Failed to deserialize cuda engine (cause: [defaultAllocator.cpp::"
        "allocate::31] Error Code 1: Cuda Runtime (out of memory))"
    )


def test_a_kv_cache_error_the_terminal_wrapped_is_read_whole() -> None:
    """As the terminal showed it: cut at its width (119 columns), the rest on the next line."""
    text = job_capture("vllm_v1_kv_cache_check_hard_wrapped_by_terminal.txt")

    progress = read_progress("vllm serve m", text)

    assert progress.error == (
        "ValueError: To serve at least one request with the model's max seq len (100000), "
        "(4.26 GiB KV cache is needed, which is larger than the available KV cache memory "
        "(4.25 GiB). Based on the avai"
    )


def test_a_line_the_terminal_wrapped_at_80_columns_is_read_whole() -> None:
    """Every line of a real log cut at 80 columns, as an 80-column terminal shows it."""
    text = job_capture("vllm_compose_kv_cache_no_available_memory_for_cache_blocks.txt")
    shown = [line[i : i + 80] for line in text.splitlines() for i in range(0, len(line), 80)]

    assert first_error(shown) == (
        "ValueError: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine."
    )


def test_a_line_continued_with_a_backslash_is_read_whole() -> None:
    error = first_error(
        ["ERROR: Could not find a version that satisfies \\", "the requirement vllm"]
    )
    assert error == "Could not find a version that satisfies the requirement vllm"


def test_a_quiet_warning_about_nothing_failing_stays_no_error() -> None:
    assert first_error(["NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>"]) is None
