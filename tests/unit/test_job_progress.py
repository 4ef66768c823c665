"""Progress read from job logs, on the real captures (tests/fixtures/jobs, tests/fixtures/recon).

Logs in a file keep what a terminal hides: each progress state rewritten with \\r, bars glued to
the next line, ranks interleaved, per-process prefixes. The cases below rebuild those from the
captures' own lines.
"""

from __future__ import annotations

from tests.support.captures import capture, job_capture
from tools.jobs.progress import read_progress
from tools.jobs.progress.lines import message, screen_lines
from tools.jobs.progress.prefixes import peel

HF_CLI_023 = "hf_download_cli_0.23.4_resume_single_file_snapshot_path.txt"
HF_HUB_15 = "hf_download_hub1.5_nontty_cached_fetching17_download_complete.txt"
HF_VERBOSE = "hf_download_verbose_kubectl_logs_init_container_shards.txt"
PULL_NONTTY = "docker_pull_nvcr_pytorch_23.07_nontty_legacy_builder_layers.txt"
PULL_SPARK = "docker_pull_nvcr_pytorch_25.09_dgx_spark_elided.txt"
PULL_CREDS = "docker_pull_nvcr_error_getting_credentials_gpg.txt"
VLLM_SHARDS = "vllm_serve_multinode_ray_405b_fp8_slow_shard_loading.txt"
VLLM_DEDUP = "vllm_serve_multinode_ray_repeated_across_cluster_dedup.txt"
VLLM_FAILED = "docker_pull_vllm_openai_latest_then_vllm_0.19_startup_gpu_mem_error.txt"


def rewritten(lines: list[str]) -> str:
    """Lines as one progress bar leaves them in a file: each state after a \\r, one newline."""
    return "\r" + "\r".join(lines) + "\n"


def test_hf_download_of_one_file_with_its_bar_and_final_path() -> None:
    progress = read_progress(
        "huggingface-cli download Orenguteng/X f.gguf", job_capture(HF_CLI_023)
    )

    assert progress.kind == "hf_download" and progress.ready and progress.fraction == 1.0
    assert progress.facts["bytes_total"] == 4_920_000_000 and progress.facts["rate"] == "212MB/s"
    assert progress.facts["path"].endswith("/snapshots/55cb207db4f777bdf8836d0ac5986c661280822b/"
                                           "Lexi-Llama-3-8B-Uncensored_Q4_K_M.gguf")  # fmt: skip
    assert "1/1 files started are done" in progress.summary


def test_hf_download_midway_reads_the_last_state_of_a_rewritten_bar() -> None:
    lines = job_capture(HF_HUB_15).splitlines()
    fetching = [line for line in lines if line.startswith("Fetching 17 files")]
    midway = fetching[0].replace("0%|          | 0/17", " 47%|####7     | 8/17")
    log = rewritten([fetching[0], midway])  # the 100% state has not been printed yet

    progress = read_progress("hf download Qwen/Qwen3.5-122B-A10B-FP8", log)

    assert progress.summary.startswith("8/17 files")
    assert progress.fraction is not None and round(progress.fraction, 2) == 0.47
    assert not progress.ready


def test_hf_download_from_cache_ends_complete() -> None:
    progress = read_progress("hf download org/model", job_capture(HF_HUB_15))

    assert progress.ready and progress.facts["files_done"] == progress.facts["files_total"] == 17


def test_hf_verbose_lines_count_files() -> None:
    log = job_capture(HF_VERBOSE)
    first_file_only = "\n".join(log.splitlines()[:3])

    progress = read_progress("hf download mistralai/x", first_file_only)

    assert progress.facts == {"files_done": 1, "files_started": 2}
    assert progress.summary == "1/2 files started are done"


def test_docker_pull_counts_layers_without_a_terminal() -> None:
    progress = read_progress(
        "docker pull nvcr.io/nvidia/pytorch:23.07-py3", job_capture(PULL_NONTTY)
    )

    assert progress.kind == "docker_pull" and not progress.ready
    assert progress.facts["layers_total"] == 49
    assert progress.facts["layers_done"] == 4
    assert progress.summary == "layers 4/49 pulled"


def test_docker_pull_done_names_the_image() -> None:
    progress = read_progress(
        "sudo docker pull nvcr.io/nvidia/pytorch:25.09-py3", job_capture(PULL_SPARK)
    )

    assert progress.ready and progress.summary.startswith("pulled nvcr.io/nvidia/pytorch:25.09-py3")


def test_docker_pull_error_is_dockers_own_line() -> None:
    progress = read_progress("docker pull nvcr.io/nvidia/vllm:26.07-py3", job_capture(PULL_CREDS))

    assert progress.error == "error getting credentials - err: exit status 1, out: `exit status 2:"


def test_rsync_progress2_rewritten_line_reads_its_last_state() -> None:
    final = job_capture("rsync_progress2_single_5GB_file_with_time.txt").splitlines()[0]
    earlier = final.replace(
        "5,268,953,088 100%   87.36MB/s    0:00:57", "2,634,476,544  50%   88.10MB/s    0:00:29"
    )
    log = rewritten([earlier.replace("(xfr#1, to-chk=0/1)", "").rstrip()])

    progress = read_progress("rsync -a --info=progress2 /a/ b:/a/", log)

    assert progress.facts["percent"] == 50 and progress.facts["eta_s"] == 29
    assert progress.summary == "2.63G (50%) at 88.10MB/s, ETA 0:00:29"


def test_rsync_finished_with_summary_and_old_counters() -> None:
    old = read_progress(
        "rsync -vrah --progress a b",
        job_capture("rsync_progress_macos_2.6.9_xfer_to-check_format.txt"),
    )
    per_file = read_progress(
        "rsync -Prv a .", job_capture("rsync_P_single_file_over_ssh_with_stats.txt")
    )
    human = read_progress(
        "rsync --info=progress2 -h a b",
        job_capture("rsync_info_progress2_human_lines_inside_installer_script.txt"),
    )

    assert old.ready and old.facts["files_checked"] == old.facts["files_total"] == 6
    assert per_file.ready and per_file.facts["total_bytes"] == 31_337_841
    assert human.facts["bytes_done"] == 737_820_000 and human.facts["rate"] == "125.73MB/s"


def test_engine_shard_loading_behind_ray_prefixes_and_dedup_suffixes() -> None:
    slow = read_progress("vllm serve neuralmagic/x", job_capture(VLLM_SHARDS))
    dedup = read_progress("vllm serve meta-llama/x", job_capture(VLLM_DEDUP))

    assert slow.summary == "loading checkpoint shards 11/86 (13%), ETA 2:43:56"
    assert dedup.facts["shards_done"] == 94 and dedup.facts["shards_total"] == 191
    assert dedup.facts["weights_loaded"] == "24.4023 GB"


def test_engine_shard_bar_glued_to_the_next_log_line() -> None:
    lines = job_capture(VLLM_SHARDS).splitlines()
    glued = lines[-1] + lines[1]  # the bar had no newline; a worker's line followed directly

    progress = read_progress("vllm serve x", "\n".join([*lines[:-1], glued]))

    assert progress.facts["shards_done"] == 11


def test_engine_ready_lines_of_vllm_and_sglang() -> None:
    playbook = read_progress(
        "vllm serve x", job_capture("vllm_serve_ready_lines_dgx_spark_playbook_405b_tp2.txt")
    )
    sglang = read_progress(
        "python3 -m sglang.launch_server --model-path x",
        job_capture("sglang_launch_server_tail_uvicorn_warmup_fired_up.txt"),
    )

    assert playbook.ready and playbook.facts["url"] == "http://0.0.0.0:8000"
    assert sglang.ready and sglang.summary.startswith("ready")


def test_engine_failure_is_the_logs_own_exception_line() -> None:
    failed = read_progress("vllm serve Qwen/Qwen3-0.6B", job_capture(VLLM_FAILED))
    oom = read_progress(
        "vllm serve x", job_capture("vllm_serve_tp_worker_cuda_oom_interleaved_workers.txt")
    )

    assert failed.error is not None and failed.error.startswith(
        "ValueError: Free memory on device cuda:0"
    )
    assert failed.summary == f"failed: {failed.error}"
    assert failed.facts["version"] == "0.19.0"
    assert oom.error is not None and oom.error.startswith(
        "torch.OutOfMemoryError: CUDA out of memory"
    )


def test_engine_interleaved_ranks_are_no_errors() -> None:
    ranks = read_progress(
        "python3 -m sglang.launch_server --tp 16",
        job_capture("sglang_multinode_node0_tp_ranks_memory_pool_interleaved.txt"),
    )

    assert ranks.error is None and not ranks.ready and ranks.summary == "starting"


def test_engine_weights_loaded_before_ready() -> None:
    progress = read_progress(
        "vllm serve x",
        job_capture("vllm_serve_v1_enginecore_model_loading_kv_cache_cudagraphs.txt"),
    )

    assert progress.summary == "weights loaded (2.0513 GiB), starting up"
    assert progress.facts["kv_cache_tokens"] == 1_587_648


def test_nccl_tests_rows_while_running_and_the_average_at_the_end() -> None:
    healthy = capture("spark_nccl_all_gather_perf_healthy.txt")
    first_row = healthy[: healthy.index("  2147483648")]

    running = read_progress("all_gather_perf -b 1G -e 4G -f 2", first_row)
    done = read_progress("mpirun -np 2 all_gather_perf -b 1G", healthy)
    degraded = read_progress("all_gather_perf", capture("spark_nccl_all_gather_perf_degraded.txt"))

    assert running.facts["busbw_gb_s"] == 19.73 and not running.ready
    assert done.ready and done.facts["avg_busbw_gb_s"] == 21.4033
    assert "(171 Gb/s)" in done.summary
    assert degraded.facts["avg_busbw_gb_s"] == 2.82151


def test_ib_write_bw_reads_the_average_of_the_last_row() -> None:
    text = capture("spark_ib_write_bw_client_rocep1s0f0.txt")

    progress = read_progress("ib_write_bw -d rocep1s0f0 --report_gbits 192.168.200.12", text)

    assert progress.facts["bw_average"] == 92.57 and progress.facts["unit"] == "Gb/s"
    assert (
        progress.summary == "RDMA_Write BW Test: 92.57 Gb/s average (65536 B messages, rocep1s0f0)"
    )


def test_unknown_commands_show_their_last_line_and_kind_comes_from_the_log() -> None:
    guessed = read_progress("./fetch-weights.sh", job_capture(PULL_SPARK))
    plain = read_progress("sleep 100; echo done", "a\r\nb\n")

    assert guessed.kind == "docker_pull"
    assert plain.kind == "output" and plain.summary == "b"


def test_messages_without_process_prefixes_and_escape_sequences() -> None:
    line = (
        "(EngineCore_DP0 pid=1356) (RayWorkerWrapper pid=383, ip=192.168.200.12) "
        "INFO 02-04 18:47:06 [cuda.py:345] Using X"
    )

    assert message(line) == "Using X"
    assert message("[2025-02-09 04:42:27 TP2] Memory pool end.") == "Memory pool end."
    assert screen_lines("\x1b[2Kone\rtwo\n\x1b[1Athree") == ["two", "three"]


def test_a_second_poll_of_the_same_log_peels_no_line_again() -> None:
    tail = "\n".join(job_capture(VLLM_FAILED).splitlines()[-40:])
    first = read_progress("vllm serve m", tail)
    peeled = peel.cache_info().misses

    assert read_progress("vllm serve m", tail) == first
    assert peel.cache_info().misses == peeled
