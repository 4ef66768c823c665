"""Which job commands run inside a container, and how they are started so that a stop can end
the process there (a killed `docker exec` client leaves it running: docker/cli#5309)."""

from __future__ import annotations

import shlex

import pytest

from tools.jobs.in_container import in_container


def test_a_plain_docker_exec_records_its_pid_inside_and_runs_the_same_argv() -> None:
    found = in_container("docker exec -e HF_HOME=/hf -it vllm_node vllm serve Q --port 8000", "s")

    assert found is not None and found.container == "vllm_node"
    words = shlex.split(found.wrapped)
    assert words[:6] == ["docker", "exec", "-e", "HF_HOME=/hf", "-it", "vllm_node"]
    assert words[6:9] == ["sh", "-c", 'echo $$ > /tmp/.scout-job-s.pid; exec "$@"']
    assert words[9:] == ["scout-job", "vllm", "serve", "Q", "--port", "8000"]


@pytest.mark.parametrize(
    "command",
    [
        "docker exec -d vllm_node vllm serve Q",  # detached: its output goes nowhere anyway
        "docker exec vllm_node sleep 5 | tee log",  # a pipeline: not one exec
        "docker exec vllm_node sleep 5; echo done",
        "docker exec vllm_node ls $HOME",  # the host's shell expands this; a rewrite would not
        "docker exec --unknown-flag c sleep 5",
        "docker exec vllm_node",
        "hf download Qwen/Qwen3-8B",
        "docker exec 'unterminated",
    ],
)
def test_anything_else_runs_as_given(command: str) -> None:
    assert in_container(command, "s") is None
