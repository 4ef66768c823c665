"""The wall's fork-server on this machine, spoken to over pipes as Scout speaks to it over SSH.

The server is started exactly as the host starts it (`python3 -I -S -c LAUNCH FOLDER serve`,
from a folder holding the shipped files); each call must come back framed to its own number,
inside the wall, with its own exit status; a KILL, and the server's channel closing, must end
a call and everything it started.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import sleepers
from tools.wall.command import _LAUNCH, HELPER_SOURCES
from tools.wall.host_helper import UNWALLED_MARK, UNWALLED_STATUS
from tools.wall.host_landlock import landlock_abi
from tools.wall.host_server import ERR, EXIT, HEADER, IN, KILL, OPEN, OUT, READY_LINE, RUN

SPEC = "ports= addrs= scratch=1 limit=30"


@pytest.fixture(autouse=True)
def needs_landlock() -> None:
    if landlock_abi() < 1:
        pytest.skip("needs a kernel with Landlock")


class Server:
    """The server as a child process, and the frames it sent so far, by call."""

    def __init__(self, folder: Path) -> None:
        for name, text in HELPER_SOURCES.items():
            (folder / name).write_text(text)
        launch = [sys.executable, "-I", "-S", "-c", _LAUNCH, str(folder), "serve"]
        self.process = subprocess.Popen(launch, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.process.stdout is not None and self.process.stdin is not None
        self.stdout, self.stdin = self.process.stdout, self.process.stdin
        assert self.stdout.readline() == READY_LINE

    def send(self, number: int, kind: int, *words: str) -> None:
        payload = b"\0".join(word.encode() for word in words)
        self.stdin.write(HEADER.pack(number, kind, len(payload)) + payload)
        self.stdin.flush()

    def results(self, count: int) -> dict[int, tuple[str, str, int]]:
        """The next `count` calls to end: (stdout, stderr, exit status) by call number."""
        output: dict[int, dict[int, bytes]] = {}
        ended: dict[int, tuple[str, str, int]] = {}
        while len(ended) < count:
            number, kind, length = HEADER.unpack(self.stdout.read(HEADER.size))
            data = self.stdout.read(length)
            streams = output.setdefault(number, {OUT: b"", ERR: b""})
            if kind == EXIT:
                ended[number] = (streams[OUT].decode(), streams[ERR].decode(), int(data))
            else:
                streams[kind] += data
        return ended


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    started = Server(tmp_path)
    try:
        yield started
    finally:
        started.process.kill()
        started.process.wait(timeout=30)


def lingering(seconds: str) -> str:
    return f"setsid sleep {seconds} >/dev/null 2>&1 < /dev/null & echo started; sleep {seconds}"


def test_calls_at_once_come_back_each_to_its_own_number_inside_the_wall(
    server: Server, tmp_path: Path
) -> None:
    target = tmp_path / "written"
    server.send(7, RUN, SPEC, "sh", "-c", 'sleep 0.3; echo "seven $SCOUT_WALL"; exit 3')
    server.send(8, RUN, SPEC, "sh", "-c", f"echo eight; echo oops >&2; echo x > {target}")
    ended = server.results(2)
    out, err, status = ended[7]
    assert status == 3 and out.startswith("seven landlock-abi-") and "seccomp" in out
    out, err, status = ended[8]
    assert out == "eight\n" and err.startswith("oops\n") and "ermission denied" in err
    assert status != 0 and not target.exists()


def test_an_open_call_reads_what_the_caller_sends_inside_the_wall(server: Server) -> None:
    answer = 'while read -r line; do echo "got $line $SCOUT_WALL"; done; echo done'
    server.send(3, OPEN, SPEC, "sh", "-c", answer)
    server.send(4, RUN, SPEC, "sh", "-c", "cat; echo ran")  # its stdin stays /dev/null
    server.send(3, IN, "one\ntwo\n")
    server.send(3, IN)  # the end of its stdin
    ended = server.results(2)
    out, _, status = ended[3]
    lines = out.splitlines()
    assert status == 0 and lines[-1] == "done"
    assert [line.split()[:2] for line in lines[:-1]] == [["got", "one"], ["got", "two"]]
    assert "seccomp" in lines[0]
    assert ended[4][0] == "ran\n"


def test_a_wall_that_cannot_be_built_refuses_and_runs_nothing(server: Server) -> None:
    server.send(1, RUN, "ports= addrs= scratch=1 limit=30 abi=0", "sh", "-c", "echo RAN")
    out, _, status = server.results(1)[1]
    assert status == UNWALLED_STATUS and out.startswith(UNWALLED_MARK) and "RAN" not in out


def test_kill_ends_the_call_and_what_it_started(server: Server) -> None:
    seconds = f"700.{uuid.uuid4().int % 10_000}"
    server.send(1, RUN, SPEC, "sh", "-c", lingering(seconds))
    deadline = time.monotonic() + 20
    while not sleepers(seconds) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sleepers(seconds), "the call never started"
    server.send(1, KILL)
    out, _, status = server.results(1)[1]
    assert out == "started\n" and status >= 128 and sleepers(seconds) == []


def test_the_time_limit_holds_in_a_forked_call(server: Server) -> None:
    seconds = f"701.{uuid.uuid4().int % 10_000}"
    server.send(1, RUN, "ports= addrs= scratch=1 limit=1", "sh", "-c", lingering(seconds))
    assert server.results(1)[1][2] == 124 and sleepers(seconds) == []


def test_when_its_channel_closes_the_server_ends_every_call(server: Server) -> None:
    seconds = f"702.{uuid.uuid4().int % 10_000}"
    server.send(1, RUN, SPEC, "sh", "-c", lingering(seconds))
    deadline = time.monotonic() + 20
    while not sleepers(seconds) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sleepers(seconds), "the call never started"
    server.stdin.close()
    assert server.process.wait(timeout=30) == 0
    deadline = time.monotonic() + 10
    while sleepers(seconds) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sleepers(seconds) == []


def test_a_server_killed_outright_takes_its_calls_with_it(server: Server) -> None:
    seconds = f"703.{uuid.uuid4().int % 10_000}"
    server.send(1, RUN, SPEC, "sh", "-c", lingering(seconds))
    deadline = time.monotonic() + 20
    while not sleepers(seconds) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(server.process.pid, 9)
    deadline = time.monotonic() + 10
    while sleepers(seconds) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sleepers(seconds) == []
