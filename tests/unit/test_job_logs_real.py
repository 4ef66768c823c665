"""Every real job capture read as a user would want it told: what it did, or the line that says
why it failed, or what it is stuck waiting on (tests/fixtures/jobs/, each with its source).

The same logs are read again behind the prefixes real launchers add (Docker Compose, torchrun,
kubectl timestamps, colour): the reading must not change, since the grammar reads messages.
"""

from __future__ import annotations

import re

import pytest

from tests.support.captures import JOB_CAPTURES, job_capture
from tools.jobs.progress import read_progress
from tools.jobs.progress.errors import first_error
from tools.jobs.progress.prefixes import ANY_HEAD, HEADS, peel

# (capture, the command that printed it, the start of the error line it must report)
FAILURES = [
    (
        "docker_pull_nvcr_error_getting_credentials_gpg.txt",
        "docker pull nvcr.io/nvidia/vllm:26.07-py3",
        "error getting credentials - err: exit status 1",
    ),
    (
        "docker_pull_failed_to_register_layer_rootless.txt",
        "docker pull vllm/vllm-openai:latest",
        "docker: failed to register layer: Error processing tar file(exit status 1)",
    ),
    (
        "docker_pull_vllm_openai_latest_then_vllm_0.19_startup_gpu_mem_error.txt",
        "docker run --gpus all vllm/vllm-openai:latest --model Qwen/Qwen3-0.6B",
        "ValueError: Free memory on device cuda:0 (9.02/11.63 GiB) on startup",
    ),
    (
        "pip_install_vllm_no_matching_distribution.txt",
        "pip install vllm",
        "Could not find a version that satisfies the requirement vllm",
    ),
    (
        "sglang_scheduler_hit_an_exception_traceback_keyerror.txt",
        "python3 -m sglang.launch_server --model-path Qwen2-7B-Instruct --tensor 2",
        "KeyError: 'layers.0.self_attn.qkv_proj.weight'",
    ),
    (
        "vllm_serve_fastsafetensors_loader_then_import_error.txt",
        "vllm serve Qwen/Qwen3-30B-A3B-FP8 --load-format fastsafetensors",
        "ModuleNotFoundError: No module named 'fastsafetensors'",
    ),
    (
        "vllm_serve_tp_worker_cuda_oom_interleaved_workers.txt",
        "vllm serve x --tensor-parallel-size 4",
        "torch.OutOfMemoryError: CUDA out of memory",
    ),
    (
        "torch_rank_prefixed_nccl_internal_error.txt",
        "torchrun --nproc-per-node 2 serve.py",
        "RuntimeError: NCCL Error 3: internal error",
    ),
    (
        "nccl_tests_test_nccl_failure_unhandled_cuda_error.txt",
        "all_reduce_perf -b 8 -e 128M -g 2",
        "catalyst-convoy: Test NCCL failure common.cu:1285 'unhandled cuda error'",
    ),
]

# (capture, command, kind, finished): logs of work that went well, none of them an error
SUCCESSES = [
    (
        "docker_pull_nvcr_pytorch_25.09_dgx_spark_elided.txt",
        "docker pull nvcr.io/nvidia/pytorch:25.09-py3",
        "docker_pull",
        True,
    ),
    (
        "docker_run_implicit_pull_nvcr_base_ubuntu_then_nvidia_smi_8xA100.txt",
        "docker run --rm --gpus all nvcr.io/nvidia/base/ubuntu:22.04_20240212 nvidia-smi",
        "docker_pull",
        True,
    ),
    (
        "hf_download_cli_0.23.4_resume_single_file_snapshot_path.txt",
        "huggingface-cli download o/m f.gguf",
        "hf_download",
        True,
    ),
    (
        "hf_download_hub1.5_nontty_cached_fetching17_download_complete.txt",
        "hf download o/m",
        "hf_download",
        True,
    ),
    ("hf_download_hub1.x_xet_complete_path_line.txt", "hf download o/m", "hf_download", True),
    ("rsync_P_single_file_over_ssh_with_stats.txt", "rsync -Prv a:f .", "rsync", True),
    (
        "rsync_progress_macos_2.6.9_xfer_to-check_format.txt",
        "rsync -vrah --progress a b",
        "rsync",
        True,
    ),
    (
        "sglang_launch_server_tail_uvicorn_warmup_fired_up.txt",
        "python3 -m sglang.launch_server --tp 16",
        "engine",
        True,
    ),
    (
        "vllm_serve_ready_lines_dgx_spark_playbook_405b_tp2.txt",
        "vllm serve m --tensor-parallel-size 2",
        "engine",
        True,
    ),
    ("vllm_serve_multinode_ray_405b_fp8_slow_shard_loading.txt", "vllm serve m", "engine", False),
    ("vllm_serve_multinode_ray_repeated_across_cluster_dedup.txt", "vllm serve m", "engine", False),
    (
        "vllm_serve_dgx_spark_two_node_double_prefix_before_stall.txt",
        "vllm serve m",
        "engine",
        False,
    ),
    (
        "vllm_serve_dgx_spark_ngc_26.03_ray_head_banner_startup.txt",
        "docker exec ray-head tail -200 /var/log/vllm.log",
        "engine",
        False,
    ),
    (
        "sglang_multinode_node0_tp_ranks_memory_pool_interleaved.txt",
        "python3 -m sglang.launch_server --tp 16",
        "engine",
        False,
    ),
    (
        "sglang_multinode_tp16_ranks_8_to_15_nccl_init.txt",
        "python3 -m sglang.launch_server --tp 16",
        "engine",
        False,
    ),
    (
        "pip_install_no_network_newconnectionerror_retries_buildkit.txt",
        "docker build .",
        "docker_build",  # BuildKit's own step lines: read by the build's reader
        False,
    ),
    (
        "pip_install_ray_default_requirement_already_satisfied_extras.txt",
        "pip install ray[default]",
        "output",
        False,
    ),
    (
        "ray_start_worker_block_in_vllm_openai_container.txt",
        "ray start --block --address=h:6379",
        "output",
        False,
    ),
    (
        "ray_start_workers_two_nodes_interleaved_tab_separated.txt",
        "ray start --block --address=h:6379",
        "output",
        False,
    ),
    ("ray_start_head_cli_output_plain.txt", "ray start --head", "output", False),
]

LAUNCHERS = {
    "compose": lambda line: f"vllm-head-1  | {line}",
    "torchrun": lambda line: f"[rank0]: {line}",
    "kubectl --timestamps": lambda line: f"2025-02-17T10:00:00.123456789Z {line}",
    "colour": lambda line: f"\x1b[32m{line}\x1b[0m",
}


@pytest.mark.parametrize(("name", "command", "error"), FAILURES, ids=[f[0][:40] for f in FAILURES])
def test_a_failed_job_reports_the_line_that_says_why(name: str, command: str, error: str) -> None:
    progress = read_progress(command, job_capture(name))

    assert progress.error is not None and progress.error.startswith(error)
    assert progress.summary.startswith(f"failed: {progress.error}") and not progress.ready


@pytest.mark.parametrize(
    ("name", "command", "kind", "finished"), SUCCESSES, ids=[s[0][:40] for s in SUCCESSES]
)
def test_work_that_went_well_is_no_error(
    name: str, command: str, kind: str, finished: bool
) -> None:
    progress = read_progress(command, job_capture(name))

    assert (progress.kind, progress.ready, progress.error) == (kind, finished, None)
    assert progress.waiting is None


@pytest.mark.parametrize("launcher", LAUNCHERS)
@pytest.mark.parametrize(
    "case", [*FAILURES, *(s[:2] for s in SUCCESSES)], ids=lambda case: case[0][:30]
)
def test_a_launchers_prefix_on_every_line_changes_nothing(case: tuple, launcher: str) -> None:
    name, command = case[0], case[1]
    log = job_capture(name)
    wrapped = "\n".join(LAUNCHERS[launcher](line) for line in log.splitlines())

    plain, behind = read_progress(command, log), read_progress(command, wrapped)

    assert (behind.kind, behind.ready, behind.error) == (plain.kind, plain.ready, plain.error)
    assert behind.fraction == plain.fraction


@pytest.mark.parametrize(
    ("line", "message", "loud", "quiet"),
    [
        (
            "(EngineCore_DP0 pid=192) ERROR 03-18 11:27:27 [core.py:866] "
            "EngineCore failed to start.",
            "EngineCore failed to start.",
            True,
            False,
        ),
        (
            "[2025-05-25 19:45:03] [ERROR] Scheduler hit an exception: "
            "Traceback (most recent call last):",
            "Traceback (most recent call last):",
            True,
            False,
        ),
        (
            "[TP5 EP5] Scheduler hit an exception: Traceback (most recent call last):",
            "Traceback (most recent call last):",
            True,
            False,
        ),
        (
            "#51 0.871 WARNING: Retrying (Retry(total=4, connect=None)) after connection broken",
            "Retrying (Retry(total=4, connect=None)) after connection broken",
            False,
            True,
        ),
        (
            "[2025-02-16 18:29:17,459 W 1 1] global_state_accessor.cc:429: Retrying to get node",
            "Retrying to get node",
            False,
            True,
        ),
        (
            "2026-04-01 11:21:35,696\tSUCC scripts.py:1142 -- Ray runtime started.",
            "Ray runtime started.",
            False,
            True,
        ),
        (
            "[rank0]:[W117 03:41:45.075470549 ProcessGroupNCCL.cpp:1524] Warning: leak",
            "Warning: leak",
            False,
            True,
        ),
        ("catalyst-convoy:776691:776691 [1] NCCL INFO init.cc:1811 -> 1", "-> 1", False, True),
        ("INFO:     Application startup complete.", "Application startup complete.", False, True),
    ],
)
def test_prefixes_peel_off_and_keep_their_level(
    line: str, message: str, loud: bool, quiet: bool
) -> None:
    said = peel(line)

    assert (said.text, said.loud, said.quiet) == (message, loud, quiet)


def test_the_exception_line_of_a_traceback_wins_over_its_opening_and_frames() -> None:
    lines = job_capture("sglang_scheduler_hit_an_exception_traceback_keyerror.txt").splitlines()
    opening_only = lines[:4]

    assert first_error(opening_only) == "Traceback (most recent call last):"
    assert first_error(lines) == "KeyError: 'layers.0.self_attn.qkv_proj.weight'"


def test_a_scheduler_that_died_is_failed_not_loading_its_shards() -> None:
    crash = job_capture("sglang_scheduler_hit_an_exception_traceback_keyerror.txt")
    loading = job_capture("vllm_serve_multinode_ray_405b_fp8_slow_shard_loading.txt")

    progress = read_progress("python3 -m sglang.launch_server --tp 2", loading + crash)

    assert progress.summary == "failed: KeyError: 'layers.0.self_attn.qkv_proj.weight'"


def test_a_pull_that_died_on_a_layer_is_failed_with_its_layers_counted() -> None:
    layers = job_capture("docker_pull_nvcr_pytorch_23.07_nontty_legacy_builder_layers.txt")
    died = job_capture("docker_pull_failed_to_register_layer_rootless.txt")

    progress = read_progress("docker pull nvcr.io/nvidia/pytorch:23.07-py3", layers + died)

    assert progress.error is not None and progress.error.startswith("docker: failed to register")
    assert progress.summary.endswith("(after layers 4/49 pulled)") and not progress.ready


@pytest.mark.parametrize(
    "line",
    [
        "INFO 04-03 15:05:44 [vllm.py:790] Asynchronous scheduling is enabled.",
        "Set TORCH_NCCL_ASYNC_ERROR_HANDLING=1 to surface failures",
        "sent 31,338,024 bytes  received 35 bytes  0 errors",
        "WARNING: Retrying after connection broken by 'NewConnectionError(...)': /simple/x/",
        '  File "/usr/lib/python3.12/site-packages/x.py", line 3, in f',
        "    except Exception as exc:",
        "d66d6a6a3687: Pull complete",
    ],
)
def test_lines_that_only_mention_errors_are_no_errors(line: str) -> None:
    assert first_error([line]) is None


def test_exit_status_lines_are_errors_only_when_not_zero() -> None:
    assert first_error(["make: *** [all] Error 2"]) is not None
    assert first_error(["process exited with code 137"]) == "process exited with code 137"
    assert first_error(["process exited with code 0"]) is None


def test_every_failure_line_is_found_wherever_it_is_in_the_log() -> None:
    """The grammar, not a position: the cause is found after hundreds of ordinary lines."""
    ordinary = job_capture("vllm_serve_multinode_ray_repeated_across_cluster_dedup.txt")
    for name, command, error in FAILURES:
        progress = read_progress(command, ordinary + "\n" + job_capture(name))
        assert progress.error is not None and re.sub(r"\s+", " ", progress.error).startswith(
            re.sub(r"\s+", " ", error)
        ), name


def test_the_one_pass_test_for_a_head_agrees_with_every_head_on_every_real_line() -> None:
    """peel asks one combined pattern whether any head is there before trying each: on every
    line of every capture, bare and behind each launcher's prefix (and peeled layer by layer),
    it must say yes exactly where some head matches, or a head would be skipped."""
    lines = {
        layer
        for capture in sorted(JOB_CAPTURES.glob("*.txt"))
        for line in job_capture(capture.name).splitlines()
        for wrap in (str, *LAUNCHERS.values())
        for layer in _layers(wrap(line))
    }
    assert len(lines) > 1000
    for line in lines:
        assert (ANY_HEAD.match(line) is not None) == any(h.match(line) for h in HEADS), line


def _layers(line: str) -> list[str]:
    """The line and what is left of it after each head the loop would take off."""
    layers = [line.strip()]
    for _ in range(12):
        match = next((m for h in HEADS if (m := h.match(layers[-1])) and m.group(0)), None)
        if match is None:
            return layers
        layers.append(layers[-1][match.end() :])
    return layers
