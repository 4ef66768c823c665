"""The status program (tools/jobs/status_script.py) under every awk a host may have: mawk 1.3.4
(Debian 12's and Ubuntu 22.04's default, without interval expressions), gawk, BusyBox's awk and
the original awk, each reading job folders that hold the real job captures as their logs.

Every awk must print the same records, and what Scout reads from them must be what the whole
log says: the layers of a pull, the error line of a failed start, a stuck wait.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.captures import job_capture
from tests.unit.test_job_logs_real import FAILURES, SUCCESSES
from tools.jobs.progress import read_progress
from tools.jobs.records import JobRecord, parse_status
from tools.jobs.status_script import PROGRAM, status_env

TOKEN = "@@scout-awk-0001"
AWKS = {
    "mawk": ["mawk"],
    "gawk": ["gawk"],
    "busybox": ["busybox", "awk"],
    "original-awk": ["original-awk"],
}
LONG_PULL = ("docker_pull_nvcr_pytorch_23.07_nontty_legacy_builder_layers.txt", "docker pull x")
CAPTURES = [
    *((name, command) for name, command, _error in FAILURES),
    *((name, command) for name, command, _kind, _done in SUCCESSES),
    LONG_PULL := (
        "docker_pull_nvcr_pytorch_23.07_nontty_legacy_builder_layers.txt",
        "docker pull x",
    ),
    ("vllm_serve_ray_placement_group_waiting.txt", "vllm serve m"),
]


def _awk(name: str) -> list[str]:
    command = AWKS[name]
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed (scripts/test.sh installs it as root)")
    return command


@pytest.fixture(scope="module")
def job_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished job folder per capture, its log the capture, as the runner leaves them."""
    root = tmp_path_factory.mktemp("jobs")
    for number, (name, command) in enumerate(CAPTURES):
        folder = root / f"job{number:02d}"
        folder.mkdir()
        files = {"command": command, "started": "1700000000", "startup": "100", "pid": "999999999"}
        files |= {"exit": "1", "ended": "1700000100", "endup": "200"}
        for key, value in files.items():
            (folder / key).write_text(value + "\n")
        (folder / "log").write_text(job_capture(name))
    (root / "program.awk").write_text(PROGRAM)
    return root


def _records(awk: list[str], root: Path) -> list[JobRecord]:
    folders = sorted(str(p) for p in root.iterdir() if p.is_dir())
    env = {**os.environ, **status_env(TOKEN, None)}
    done = subprocess.run(
        [*awk, "-f", str(root / "program.awk"), *folders],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return parse_status("h", done.stdout, TOKEN)[1]


@pytest.mark.parametrize("awk", AWKS)
def test_every_awk_reads_the_real_logs_as_the_whole_log_reads(awk: str, job_root: Path) -> None:
    records = _records(_awk(awk), job_root)

    assert len(records) == len(CAPTURES)
    for record, (name, command) in zip(records, CAPTURES, strict=True):
        whole = read_progress(command, job_capture(name))
        read = record.progress
        assert read is not None and record.state == "exited", name
        assert (read.kind, read.ready, read.error, read.waiting) == (
            whole.kind, whole.ready, whole.error, whole.waiting,
        ), name  # fmt: skip


@pytest.mark.parametrize("awk", ["mawk", "busybox", "original-awk"])
def test_every_awk_prints_what_gawk_prints(awk: str, job_root: Path) -> None:
    reference = _records(_awk("gawk"), job_root)

    assert _records(_awk(awk), job_root) == reference


def test_mawk_keeps_the_layer_milestones_of_a_long_pull(job_root: Path) -> None:
    records = _records(_awk("mawk"), job_root)
    pull = records[CAPTURES.index(LONG_PULL)]

    assert pull.progress is not None and pull.progress.facts["layers_total"] >= 20
