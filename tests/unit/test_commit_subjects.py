"""Commit subjects stay readable in `git log --oneline`: at most 72 characters, the why in the
body. Older history ran longer; the rule holds from the commit that set it (issue 42)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SINCE = "7c00a9f"  # the first commit after the rule was set
LIMIT = 72


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def long_subjects(subjects: list[str]) -> list[str]:
    return [subject for subject in subjects if len(subject) > LIMIT]


def test_the_rule_catches_a_long_subject() -> None:
    assert long_subjects(["x" * 72, "y" * 73]) == ["y" * 73]


def test_every_commit_since_the_rule_has_a_short_subject() -> None:
    if shutil.which("git") is None or _git("rev-parse", "--git-dir").returncode:
        pytest.skip("not a git checkout")
    if _git("cat-file", "-e", f"{SINCE}^{{commit}}").returncode:
        pytest.skip("a shallow checkout without the commit the rule starts at")
    subjects = _git("log", "--format=%s", f"{SINCE}..HEAD").stdout.splitlines()
    assert long_subjects(subjects) == []
