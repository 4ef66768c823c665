"""GitHub page URLs → the raw file they show (the URL function only; no network)."""

from __future__ import annotations

import pytest

from tools.web.github import github_raw_url


@pytest.mark.parametrize(
    ("url", "raw"),
    [
        (
            "https://github.com/NVIDIA/dgx-spark-playbooks",
            "https://raw.githubusercontent.com/NVIDIA/dgx-spark-playbooks/HEAD/README.md",
        ),
        (
            "https://github.com/vllm-project/vllm/",
            "https://raw.githubusercontent.com/vllm-project/vllm/HEAD/README.md",
        ),
        (
            "https://github.com/vllm-project/vllm.git",
            "https://raw.githubusercontent.com/vllm-project/vllm/HEAD/README.md",
        ),
        (
            "https://github.com/vllm-project/vllm/tree/v0.11.0",
            "https://raw.githubusercontent.com/vllm-project/vllm/v0.11.0/README.md",
        ),
        (
            "https://github.com/NVIDIA/dgx-spark-playbooks/blob/main/nvidia/vllm/README.md",
            "https://raw.githubusercontent.com/NVIDIA/dgx-spark-playbooks/main/nvidia/vllm/README.md",
        ),
        (
            "https://www.github.com/vllm-project/vllm/blob/0db7c14/examples/run_cluster.sh?plain=1",
            "https://raw.githubusercontent.com/vllm-project/vllm/0db7c14/examples/run_cluster.sh",
        ),
    ],
)
def test_repository_and_blob_urls_become_raw(url: str, raw: str) -> None:
    assert github_raw_url(url) == raw


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/vllm-project/vllm/issues/123",
        "https://github.com/vllm-project/vllm/pull/9",
        "https://github.com/vllm-project",
        "https://github.com/",
        "https://gitlab.com/o/r",
        "https://raw.githubusercontent.com/o/r/HEAD/README.md",
        "https://github.com.evil.example/o/r",
    ],
)
def test_other_urls_are_left_alone(url: str) -> None:
    assert github_raw_url(url) is None
