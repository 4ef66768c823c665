"""A job stuck waiting is a state, and progress is read in every format the tools print today
(tests/fixtures/jobs/, each capture with its source)."""

from __future__ import annotations

from tests.support.captures import capture, job_capture
from tools.jobs.progress import read_progress
from tools.jobs.progress.stuck import waiting_on

PLACEMENT = "vllm_serve_ray_placement_group_waiting.txt"


def test_a_placement_group_that_never_comes_is_a_stuck_wait_with_its_reason() -> None:
    progress = read_progress(
        "vllm serve m --distributed-executor-backend ray", job_capture(PLACEMENT)
    )

    assert progress.waiting is not None
    assert progress.waiting.startswith("Waiting for creating a placement group of specs")
    assert progress.summary == f"stuck waiting: {progress.waiting}"
    assert not progress.ready and progress.error is None


def test_a_wait_within_its_bound_or_followed_by_news_is_no_stuck_wait() -> None:
    lines = job_capture(PLACEMENT).splitlines()
    started = job_capture("vllm_serve_v1_enginecore_model_loading_kv_cache_cudagraphs.txt")

    # said once, for 10 seconds: still within its bound (the line before it, saying the GPUs are
    # not there, makes the same wait stuck at once: test_job_reader_cues.py)
    assert waiting_on(lines[1:2]) is None
    assert waiting_on([*lines, *started.splitlines()]) is None  # the engine went on


def test_a_wait_that_counts_its_own_seconds_past_the_bound_is_stuck() -> None:
    lock = "Still waiting to acquire lock on /root/.cache/huggingface/hub/.locks/x.lock"

    assert waiting_on([f"{lock} (elapsed: 10.0 seconds)"]) is None
    assert waiting_on([f"{lock} (elapsed: 120.3 seconds)"]) == f"{lock} (elapsed: 120.3 seconds)"


def test_the_ray_worker_that_retried_then_started_is_not_stuck() -> None:
    progress = read_progress(
        "ray start --block --address=h:6379",
        job_capture("ray_start_worker_block_in_vllm_openai_container.txt"),
    )

    assert progress.waiting is None and progress.error is None


def test_a_fastsafetensors_loader_bar_is_weights_loading() -> None:
    lines = job_capture("vllm_serve_fastsafetensors_loader_then_import_error.txt").splitlines()
    bar = lines[1].replace(
        "0% Completed | 0/7 [00:00<?, ?it/s]", "42% Completed | 3/7 [00:09<00:12,  3.1s/it]"
    )

    progress = read_progress(
        "vllm serve m --load-format fastsafetensors", "\n".join([*lines[:1], bar])
    )

    assert progress.facts["shards_done"] == 3 and progress.facts["shards_total"] == 7
    assert progress.summary.startswith(
        "loading weights (Loading safetensors using Fastsafetensor loader) 3/7 (43%)"
    )


def test_hf_1x_with_xet_ends_complete_with_the_path_it_printed() -> None:
    progress = read_progress(
        "hf download o/m", job_capture("hf_download_hub1.x_xet_complete_path_line.txt")
    )

    assert progress.ready and progress.fraction == 1.0
    assert progress.facts["path"].endswith(r"\snapshots\5dae23fe44e31ff03610f84931d01823b4090d23")


def test_hf_path_line_followed_by_a_wrappers_own_lines_is_still_done() -> None:
    log = job_capture("hf_download_cli_0.23.4_resume_single_file_snapshot_path.txt")

    progress = read_progress(
        "sh -c 'hf download o/m f.gguf'", log + "\nModel download is complete.\n"
    )

    assert progress.ready and progress.facts["path"].endswith(
        "Lexi-Llama-3-8B-Uncensored_Q4_K_M.gguf"
    )


def test_an_implicit_pull_by_docker_run_keeps_the_registry_in_the_image() -> None:
    log = job_capture("docker_run_implicit_pull_nvcr_base_ubuntu_then_nvidia_smi_8xA100.txt")
    midway = log[: log.index("Digest:")]

    command = "docker run --rm --gpus all nvcr.io/nvidia/base/ubuntu:22.04_20240212 nvidia-smi"

    running, done = read_progress(command, midway), read_progress(command, log)

    assert running.kind == "docker_pull" and not running.ready
    assert running.facts["image"] == "nvcr.io/nvidia/base/ubuntu:22.04_20240212"
    assert done.ready and done.summary.startswith(
        "pulled nvcr.io/nvidia/base/ubuntu:22.04_20240212"
    )


def test_a_finished_pull_followed_by_engine_logs_is_a_finished_pull_and_an_engine() -> None:
    log = job_capture("docker_pull_vllm_openai_latest_then_vllm_0.19_startup_gpu_mem_error.txt")
    banner = log[: log.index("(EngineCore pid=229) Process EngineCore:")]

    command = "docker run --gpus all vllm/vllm-openai:latest --model Qwen/Qwen3-0.6B"

    progress = read_progress(command, banner)

    assert progress.kind == "engine" and progress.summary == "starting (version 0.19.0)"
    assert progress.facts["image_pulled"] == "vllm/vllm-openai:latest"


def test_rsync_progress_forms_without_a_transfer_counter() -> None:
    plain = "     32,768   0%    0.00kB/s    0:00:00\r  1,073,741,824  50%  512.00MB/s    0:00:02"

    progress = read_progress("rsync -a --progress src/ h:dst/", plain)

    assert progress.facts["bytes_done"] == 1_073_741_824 and progress.facts["percent"] == 50
    assert progress.facts["eta_s"] == 2


def test_a_benchmark_whose_command_was_cut_is_read_by_its_own_output() -> None:
    """The job folder keeps the command's first 400 characters: a long mpirun line loses its
    program's name, and the nccl-tests header (`# nccl-tests version 2…`) must still win."""
    healthy = capture("spark_nccl_all_gather_perf_healthy.txt")

    progress = read_progress("mpirun -np 2 -H 192.168.100.10:1,192.168.100.11:1 -x NCCL_", healthy)

    assert progress.kind == "nccl_tests" and progress.ready


def test_hf_verbose_lines_in_kubectl_logs_end_done_with_the_wrappers_line() -> None:
    log = job_capture("hf_download_verbose_kubectl_logs_init_container_shards.txt")
    midway = log[: log.index("Model download is complete.")]

    done, running = read_progress("hf download m", log), read_progress("hf download m", midway)

    assert done.ready and not running.ready


def test_an_error_line_of_a_job_that_exited_0_is_not_its_summary() -> None:
    log = job_capture("pip_install_vllm_no_matching_distribution.txt")

    failed, recovered = (
        read_progress("pip install x", log),
        read_progress("pip install x", log, exited_ok=True),
    )

    assert failed.summary.startswith("failed: Could not find a version")
    assert recovered.error == failed.error and not recovered.summary.startswith("failed")
