"""A job whose tool warns it cannot finish "will not finish", whatever its bars say, and the
wait for it ends; a download's progress is its main transfer's, not a small file's."""

from __future__ import annotations

from tests.support.captures import job_capture
from tools.jobs.progress import read_progress
from tools.jobs.progress.model import Progress
from tools.jobs.records import JobRecord
from tools.jobs.waiting import _stuck

GROK = "hf_download_grok1_not_enough_free_disk_space_warnings.txt"
# as grok-1's README downloads its checkpoint
GROK_COMMAND = (
    "huggingface-cli download xai-org/grok-1 --repo-type model --include ckpt-0/* "
    "--local-dir checkpoints"
)


def test_a_download_warned_it_has_no_disk_will_not_finish_with_the_reason() -> None:
    progress = read_progress(GROK_COMMAND, job_capture(GROK))

    assert progress.summary.startswith(
        "will not finish: UserWarning: Not enough free disk space to download the file."
    )
    assert "only has 0.00 MB free disk space" in progress.facts["will_not_finish"]
    assert progress.fraction is None and not progress.ready


def test_a_small_files_finished_bar_does_not_make_the_download_complete() -> None:
    """The real 4.92 GB bar of hf_download_cli_0.23.4 cut at 40 %, then a small file's bar
    printed after it at 100 % (the client's per-file bars, in turn): the main transfer counts."""
    real = job_capture("hf_download_cli_0.23.4_resume_single_file_snapshot_path.txt")
    bar = next(line for line in real.splitlines() if "4.92G/4.92G" in line)
    partial = bar.replace("100%", "40%").replace("4.92G/4.92G", "1.97G/4.92G")
    small = "config.json: 100%|██████████| 1.21k/1.21k [00:00<00:00, 5.20MB/s]"
    tail = partial + "\n" + small + "\n"

    progress = read_progress("huggingface-cli download some/model", tail)

    assert not progress.ready and progress.fraction is not None and progress.fraction < 0.5
    assert "1.97G/4.92G (40%)" in progress.summary, progress.summary


def test_the_wait_ends_on_a_job_that_will_not_finish() -> None:
    progress = read_progress(GROK_COMMAND, job_capture(GROK))
    running = JobRecord(host="h", name="download", state="running", progress=progress)
    assert _stuck(running)
    fine = Progress("hf_download", "1/2 files")
    assert not _stuck(JobRecord(host="h", name="download", state="running", progress=fine))
