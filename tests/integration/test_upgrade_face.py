"""`scout upgrade` refuses what it cannot do in one line and an exit status, before any host is
touched: no record, a record from before upgrades could read its steps, nothing asked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.runtime.deployment_record import RecordStore, build_record, read_transcript_events

pytestmark = pytest.mark.slow  # CLI subprocesses

STORY = Path(__file__).parents[2] / "transcripts" / "fresh-pair-deploy.jsonl"


def scout(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    inventory = home / "inventory.yaml"
    inventory.write_text("hosts:\n  spark-a: {address: 127.0.0.1, port: 1}\n")
    env = {**os.environ, "SCOUT_HOME": str(home / ".scout"), "HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "agent.faces.cli", "upgrade", *argv, "--inventory", str(inventory)],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("steps", "argv", "says"),
    [
        (None, ["--image", "x:1"], "scout upgrade: no deployment record yet (known: none)"),
        (False, ["--image", "x:1"], "holds no rollout steps (recorded before upgrades could"),
        (True, [], "scout upgrade: nothing to upgrade: give --image, --revision, --flag or"),
    ],
    ids=["no-record", "record-without-steps", "nothing-asked"],
)
def test_what_cannot_be_upgraded_is_one_line(tmp_path, steps, argv, says):
    if steps is not None:
        record = build_record(read_transcript_events(STORY), STORY)
        assert record is not None
        kept = record if steps else record.model_copy(update={"steps": []})
        RecordStore(tmp_path / ".scout" / "deployments").save(kept)
    done = scout(tmp_path, *argv)
    assert done.returncode == 6, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
