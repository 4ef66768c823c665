"""`scout … | head -1`: when stdout's reader leaves, every face stops quietly.

Before, a closed pipe was reported as `scout policy: cannot use a file: broken pipe; check the
path`, or as a traceback from the interpreter's last flush. Each face here still has far more
to write than a pipe holds when its reader leaves after one line, so the pipe surely breaks.
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from agent.standin.server import MessagesAPIServer
from tests.support.scout_cli import SCOUT
from tests.support.session_kit import text_turn


class HeldAPI(MessagesAPIServer):
    """The replay server, answering only once the test has closed the pipe."""

    def __init__(self, script: list[dict[str, Any]]) -> None:
        super().__init__(script)
        self.release = threading.Event()

    def _take(self, method: str, path: str, headers: dict[str, str], body: Any):
        self.release.wait(60)
        return super()._take(method, path, headers, body)


def read_one_line_and_leave(
    argv: list[str], home: Path, stdin: bytes = b"", after_close: Any = None
) -> tuple[int, str]:
    env = {**os.environ, "SCOUT_HOME": str(home), "NO_COLOR": "1", "ANTHROPIC_API_KEY": "test"}
    process = subprocess.Popen(
        [SCOUT, *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    feeding = threading.Thread(target=_feed, args=(process, stdin))
    feeding.start()
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline()
    process.stdout.close()  # what `head -1` does after its line
    if after_close is not None:
        after_close()
    stderr = process.stderr.read().decode()
    feeding.join(60)
    return process.wait(60), stderr


def _feed(process: subprocess.Popen[bytes], data: bytes) -> None:
    assert process.stdin is not None
    try:
        process.stdin.write(data)
        process.stdin.close()
    except BrokenPipeError:
        pass  # it stopped reading: what this test is about


def scout_lines(stderr: str) -> list[str]:
    """What Scout (or the interpreter) said; a library's import warnings are not Scout's."""
    return [
        line
        for line in stderr.splitlines()
        if line.startswith(("scout", "Traceback", "Exception ignored", "BrokenPipeError"))
    ]


COMMANDS = [f"ls -l /tmp/d{n}" for n in range(30_000)]
FACES = {
    "replay": (["replay", "seed-pair-deploy", "-v"], b""),
    "policy-classify-file": (["policy", "classify", "--file", "{commands}"], b""),
    "policy-classify-stdin": (["policy", "classify", "--file", "-"], "\n".join(COMMANDS).encode()),
    "redact": (["redact"], b"".join(b"line %d\n" % n for n in range(400_000))),
}


@pytest.mark.slow
@pytest.mark.parametrize("face", FACES.values(), ids=FACES.keys())
def test_a_face_whose_reader_left_stops_quietly(face, tmp_path: Path) -> None:
    commands = tmp_path / "commands.txt"
    commands.write_text("\n".join(COMMANDS) + "\n")
    argv, stdin = face
    argv = [word.replace("{commands}", str(commands)) for word in argv]
    code, stderr = read_one_line_and_leave(argv, tmp_path / "home", stdin)
    assert scout_lines(stderr) == []
    # 1 as rich's faces end on a broken pipe; 0 where the face's one large write had gone out
    # before the reader left (the kernel takes a write whole that it has begun)
    assert code in (0, 1)


@pytest.mark.slow
def test_a_headless_run_whose_reader_left_stops_quietly(tmp_path: Path) -> None:
    with HeldAPI([text_turn("done " * 200)]) as api:
        code, stderr = read_one_line_and_leave(
            ["run", "--goal", "hi", "--base-url", api.url],
            tmp_path / "home",
            after_close=api.release.set,
        )
    assert scout_lines(stderr) == []
    assert code == 1
