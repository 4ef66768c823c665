"""The weights check on the simulated cluster: recon reads each cache's revision and leftovers
from the Hub's layout, and the plan fetches again only the copies that fail a check, saying
which one."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sim.hostdir import materialize
from sim.scenario import load_scenario
from tests.integration.test_deploy_variants_sim import BASE, MODEL, plan_on
from tools.recon.probe_parse import facts_from_sections
from tools.recon.sections import HF_MODELS_COMMAND, Section

FOLDER = ".cache/huggingface/hub/models--Qwen--Qwen3.5-122B-A10B-FP8"
HEAD_REV = "5d0c1f4e9b7a2c3d8e6f1a0b9c8d7e6f5a4b3c2d"
OLD_REV = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def sh(host_dir: Path, command: str) -> subprocess.CompletedProcess[str]:
    launch = str(host_dir / "sandbox" / "launch")
    return subprocess.run([launch, command], capture_output=True, text=True, check=False)


def host(tmp_path: Path, scenario: str, name: str) -> Path:
    spec = load_scenario(scenario)
    return materialize(spec.hosts[name], spec.user, tmp_path / name)


@pytest.mark.slow
async def test_a_worker_at_an_older_revision_is_copied_again_and_the_head_kept():
    result = await plan_on("weights-old-revision", BASE)
    assert not result.get("is_error"), result["content"]
    text = result["content"]
    assert (
        f"{MODEL} on spark-b is at revision 0a1b2c3, the head spark-a's is 5d0c1f4: copied again"
        in text
    )
    assert "copy the weights to spark-b" in text and "rsync -a" in text
    assert "hf download" not in text  # the head's whole copy is kept
    assert f"{MODEL} cached on spark-a (119.0 GB at 5d0c1f4" in text


@pytest.mark.slow
async def test_a_complete_matching_copy_is_skipped():
    result = await plan_on("seed-pair", BASE)
    text = result["content"]
    assert "complete in every node's cache" in text
    assert "rsync" not in text and "hf download" not in text
    assert "the head spark-a's revision, none unfinished" in text


@pytest.mark.slow
async def test_an_interrupted_download_is_downloaded_again():
    result = await plan_on("weights-interrupted", BASE)
    text = result["content"]
    assert (
        f"{MODEL} on spark-a is unfinished (1 file still blobs/*.incomplete: a download under "
        "way or interrupted): downloaded again"
    ) in text
    assert f"hf download {MODEL}" in text
    # the worker's copy follows the download
    assert text.index(f"download {MODEL} into spark-a's HF cache") < text.index(
        "copy the weights to spark-b"
    )


@pytest.mark.slow
def test_the_interrupted_download_resumes_and_leaves_no_incomplete_blob(tmp_path: Path):
    head = host(tmp_path, "weights-interrupted", "spark-a")
    blobs = head / "home" / FOLDER / "blobs"
    assert sorted(p.suffix for p in blobs.iterdir()) == ["", ".incomplete"]  # config.json, a shard
    done = sh(head, f"hf download {MODEL}")
    assert done.returncode == 0, done.stderr
    assert not list(blobs.glob("*.incomplete"))
    revision = (head / "home" / FOLDER / "refs" / "main").read_text()
    links = sorted((head / "home" / FOLDER / "snapshots" / revision).iterdir())
    shards = [link for link in links if link.name != "config.json"]  # 14 shards + config.json
    assert len(shards) == 14 and all(link.is_symlink() and link.exists() for link in links)
    assert done.stdout.rstrip().endswith(f"/snapshots/{revision}")


@pytest.mark.slow
def test_a_new_revision_is_fetched_beside_the_old_one(tmp_path: Path):
    worker = host(tmp_path, "weights-old-revision", "spark-b")
    folder = worker / "home" / FOLDER
    assert (folder / "refs" / "main").read_text() == OLD_REV
    done = sh(worker, f"hf download {MODEL}")
    assert done.returncode == 0, done.stderr
    assert (folder / "refs" / "main").read_text() == HEAD_REV
    assert {p.name for p in (folder / "snapshots").iterdir()} == {OLD_REV, HEAD_REV}
    # the older revision's blobs stay until someone removes them: the folder holds both
    assert sh(worker, f"du -sb {FOLDER}").stdout.split("\t")[0] == "238000000000"


def test_recon_reads_the_revision_and_the_leftover_blob(tmp_path: Path):
    head = host(tmp_path, "weights-interrupted", "spark-a")
    script = f"{{ {HF_MODELS_COMMAND} ; }} 2>&1"
    sections = {"hf-models": Section("hf-models", sh(head, script).stdout, 0)}
    cache = facts_from_sections("spark-a", sections, NOW).hf_cache
    copy = cache.copies[MODEL]
    assert cache.models == {MODEL: 40_000_000_000}
    assert (copy.revision, copy.snapshot, copy.incomplete_blobs) == (
        (head / "home" / FOLDER / "refs" / "main").read_text(),
        True,
        1,
    )
