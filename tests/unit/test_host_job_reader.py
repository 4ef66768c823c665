"""The resident job status read (tools/wall/host_job_reader.py) prints what the awk program
prints: over the real job captures (tests/unit/test_status_awks.py's job folders), for running,
ended, missing and half-written jobs, for logs without a last newline and with \\r lines."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.unit.test_status_awks import _awk, _records, job_root
from tools.jobs.records import parse_status
from tools.jobs.status_script import (
    COMMAND_CHARS,
    MILESTONE_CHARS,
    MILESTONE_LINES,
    MILESTONES,
    PROGRAM,
    TAIL_BYTES,
    status_env,
)
from tools.wall.host_job_reader import READY_LINE, Reader

TOKEN = "@@scout-reader-0001"
__all__ = ["job_root"]  # the fixture, shared with the awk matrix


def reader(root: Path) -> Reader:
    limits = (TAIL_BYTES, MILESTONE_LINES, MILESTONE_CHARS, COMMAND_CHARS)
    args = [str(value).encode() for value in limits] + [MILESTONES.encode()]
    return Reader(str(root).encode(), args)


def by_awk(root: Path, names: list[str]) -> str:
    (root / "program.awk").write_text(PROGRAM)
    done = subprocess.run(
        [*_awk("gawk"), "-f", str(root / "program.awk"), *(str(root / n) for n in names)],
        capture_output=True, env={**os.environ, **status_env(TOKEN, None)}, timeout=60,
        check=True,
    )  # fmt: skip
    return done.stdout.decode("utf-8", "replace")  # bytes: text mode would turn \r into \n


def by_reader(root: Path, names: list[str]) -> str:
    printed = reader(root).records(TOKEN.encode(), [n.encode() for n in names])
    return printed.decode("utf-8", "replace")  # as Scout reads a command's output


def same_second(printed: str | bytes) -> str:
    """The output with its `uptime` line's seconds blanked, after checking they are a number:
    two reads a moment apart may straddle a second of /proc/uptime."""
    text = printed.decode("utf-8", "replace") if isinstance(printed, bytes) else printed
    uptimes = re.findall(rf"^{TOKEN} uptime (\S+)$", text, flags=re.MULTILINE)
    assert uptimes and all(value.isdigit() for value in uptimes), text[:300]
    return re.sub(rf"^({TOKEN} uptime) \d+$", r"\1 -", text, flags=re.MULTILINE)


def test_it_reads_the_real_logs_as_awk_does(job_root: Path) -> None:
    names = sorted(p.name for p in job_root.iterdir() if p.is_dir())

    records = parse_status("h", by_reader(job_root, names), TOKEN)[1]

    assert records == _records(_awk("gawk"), job_root)


@pytest.fixture
def odd_jobs(tmp_path: Path) -> Path:
    """A running job (this test's own process, with its start time), one whose recorded start
    time is another process's, one half-written, one with a log of \\r states and no last
    newline, and one with a log longer than the tail."""
    with open(f"/proc/{os.getpid()}/stat") as f:
        since = f.read().rsplit(") ", 1)[1].split()[19]
    jobs = {
        "running": {"pid": str(os.getpid()), "pidstart": since, "log": "step 1\nstep 2\n"},
        "reused": {"pid": str(os.getpid()), "pidstart": "1", "exit": "", "stop": "1"},
        "half": {"command": "", "started": "", "startup": "100"},
        "bars": {"log": "Downloading 10%\r 50%\r100%\nError: exit code 3"},
        "long": {"log": "".join(f"Download complete {i}: layer\n" for i in range(3000))},
    }
    for name, files in jobs.items():
        folder = tmp_path / name
        folder.mkdir()
        files = {"command": f"run {name}", "started": "1700000000", "startup": "99", **files}
        for key, value in files.items():
            if value or key in ("command", "started"):
                (folder / key).write_text(value + ("" if key == "log" else "\n"))
    return tmp_path


def test_it_prints_what_awk_prints_byte_for_byte(odd_jobs: Path) -> None:
    names = ["running", "reused", "half", "bars", "long", "absent"]

    printed = by_reader(odd_jobs, names)

    assert same_second(printed) == same_second(by_awk(odd_jobs, names))
    states = [r.state for r in parse_status("h", printed, TOKEN)[1]]
    assert states == ["running", "stopped", "lost", "lost", "lost", "missing"]


def test_it_answers_requests_on_stdin_after_its_ready_line(odd_jobs: Path) -> None:
    limits = [str(v) for v in (TAIL_BYTES, MILESTONE_LINES, MILESTONE_CHARS, COMMAND_CHARS)]
    launch = "import sys; from tools.wall import host_job_reader as r; r.serve(sys.argv[1:])"
    request = (TOKEN + "\0running\0absent\n").encode() * 2

    done = subprocess.run(
        ["python3", "-c", launch, str(odd_jobs), *limits, MILESTONES],
        input=request, capture_output=True, timeout=60, check=True,
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip

    answer = same_second(by_awk(odd_jobs, ["running", "absent"]))
    assert done.stdout.startswith(READY_LINE)
    assert same_second(done.stdout[len(READY_LINE) :]) == answer + answer


def test_a_file_it_may_not_read_is_said_and_no_record_is_built(odd_jobs: Path) -> None:
    denied = Path("/sys/bus/pci/rescan")  # write-only: opening it to read is EACCES, root too
    try:
        denied.open("rb").close()
        pytest.skip("no file here whose read is denied")
    except PermissionError:
        pass
    except OSError:
        pytest.skip(f"no {denied} here")
    (odd_jobs / "bars" / "log").unlink()
    (odd_jobs / "bars" / "log").symlink_to(denied)
    limits = [str(v) for v in (TAIL_BYTES, MILESTONE_LINES, MILESTONE_CHARS, COMMAND_CHARS)]
    launch = "import sys; from tools.wall import host_job_reader as r; r.serve(sys.argv[1:])"

    done = subprocess.run(
        ["python3", "-c", launch, str(odd_jobs), *limits, MILESTONES],
        input=(TOKEN + "\0running\0bars\n").encode(), capture_output=True, timeout=60,
        check=True, cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip

    said = done.stdout.removeprefix(READY_LINE).decode()
    assert said == f"{TOKEN} denied {odd_jobs}/bars/log\n{TOKEN} end\n"
