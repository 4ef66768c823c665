"""A full disk is named: the file that could not be written and the folder to clear.

The disk is real: a 64 KiB tmpfs, filled, mounted in a mount namespace of the test's own
(`unshare`, as an unprivileged user may where user namespaces are allowed), so the kernel itself
answers ENOSPC. Scout runs in that namespace as a user runs it.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from agent.standin.server import MessagesAPIServer
from tests.support.scout_cli import ROOT, SCOUT
from tests.support.session_kit import text_turn

FULL = "/mnt"  # inside the namespace only


def on_a_full_disk(command: list[str], tmp_path: Path, *, free_kib: int = 0) -> tuple[int, str]:
    """`command` with FULL a tmpfs that has `free_kib` KiB left; (exit status, Scout's lines)."""
    fill = 64 - free_kib
    script = (
        f"mount -t tmpfs -o size=64k scout-full {FULL} && mkdir {FULL}/t && "
        f"dd if=/dev/zero of={FULL}/fill bs=1k count={fill} 2>/dev/null; "
        f"exec {shlex.join(command)}"
    )
    env = {
        **os.environ,
        "SCOUT_HOME": str(tmp_path / "home"),
        "SCOUT_TRANSCRIPTS_DIR": f"{FULL}/t",
        "ANTHROPIC_API_KEY": "test",
        "PYTHONPATH": str(ROOT),
    }
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no mount namespace for a test disk here: {probe.stderr.decode().strip()}")
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    said = [line for line in done.stderr.splitlines() if line.startswith(("scout", "Traceback"))]
    return done.returncode, "\n".join(said) + "\n" + done.stdout


@pytest.mark.slow
def test_a_transcript_that_cannot_start_names_its_file_and_folder(tmp_path: Path) -> None:
    code, said = on_a_full_disk([SCOUT, "run", "--goal", "x"], tmp_path)
    assert code == 1
    assert said.startswith(f"scout run: cannot use {FULL}/t/scout-"), said
    assert said.splitlines()[0].endswith(
        ".jsonl: no space left on device; free some space on the disk that holds /mnt/t"
    )


@pytest.mark.slow
def test_a_transcript_that_fills_the_disk_mid_session_names_its_file_and_folder(
    tmp_path: Path,
) -> None:
    with MessagesAPIServer([text_turn("a long answer " * 2000)]) as api:
        code, said = on_a_full_disk(
            [SCOUT, "run", "--goal", "x", "--base-url", api.url], tmp_path, free_kib=12
        )
    first = said.splitlines()[0]
    assert code == 1
    assert first.startswith(f"scout run: cannot use {FULL}/t/scout-"), said
    assert first.endswith("no space left on device; free some space on the disk that holds /mnt/t")


SPILL_AND_PROOF = f"""
from pathlib import Path
from tools.deploy.proof.report import Report, write_files
from tools.text.bounded import bound_text
cut = bound_text("x" * 200_000, limit=100, spill_dir=Path("{FULL}/t/spill"), label="out")
print(cut.text.splitlines()[1])
report = Report("s", [], {{}}, "no GPU", None, {{"big": "y" * 100_000}})
try:
    write_files(report, Path("{FULL}/t"), "proof")
except OSError as exc:
    print(exc.filename, exc.strerror)
"""


def test_a_spill_and_a_proof_report_on_a_full_disk_name_their_file(tmp_path: Path) -> None:
    code, said = on_a_full_disk([sys.executable, "-c", SPILL_AND_PROOF], tmp_path, free_kib=8)
    spill, proof = said.strip().splitlines()[-2:]
    assert code == 0, said
    assert spill.startswith(
        f"[... 199900 characters omitted; the full output could not be saved to {FULL}/t/spill/out-"
    ), spill
    assert spill.endswith(": no space left on device (/mnt/t/spill) ...]")
    assert proof.startswith(f"{FULL}/t/proof-") and proof.endswith("No space left on device")
