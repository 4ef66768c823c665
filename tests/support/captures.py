"""The real command captures copied from shared/fixtures/recon, read as the tool printed them."""

from __future__ import annotations

from pathlib import Path

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "recon"


def capture(name: str) -> str:
    """A capture without its first line, the `# source:` note that names where it came from."""
    source, _, output = (CAPTURES / name).read_text().partition("\n")
    assert source.startswith("# source:"), f"{name} lost its source line"
    return output


JOB_CAPTURES = CAPTURES.parent / "jobs"


def job_capture(name: str) -> str:
    """A job-output capture without its `# source:` and `# what:` lines."""
    source, what, output = (JOB_CAPTURES / name).read_text().split("\n", 2)
    assert source.startswith("# source:") and what.startswith("# what:"), name
    return output
