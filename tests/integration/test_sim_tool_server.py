"""A simulated host's tool server: same answers as a tool run on its own, signals, kills, overlap.

Commands run the way the simulator runs them (HOST_DIR/sandbox/launch, restricted bash), so the
fake tools are the clients in the host's bin folder and the server is a real separate process.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from sim import hostdir
from sim.fakehost.state import locked_state
from sim.hostdir import materialize, sandbox_env
from sim.scenario import load_scenario
from sim.tool_servers import ToolServerProcess
from tests.support.waiting import WAIT_S

SAME_ANSWERS = (
    "hostname",
    "nvidia-smi -L",
    "docker ps -a --no-trunc --format '{{json .}}'",
    "ip -j addr",
    "echo piped | cat",
    "nvidia-smi --query-gpu=bogus --format=csv",
    "python3 -c 1",
    "hostname <&-",
    "docker stop nothing-here",
    "nvidia-smi -L 2>&-",
    "ip addr show dev nope; hostname",
    "cat /etc/os-release /nonexistent 2>&1",
    "pip3 list --format json | head -c 40",
)


@pytest.fixture(params=["compiled client", "python client"])
def host_dir(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A host whose fake tools are the compiled client, or the Python one (no C compiler)."""
    scenario = load_scenario("seed-pair")
    if request.param == "python client":
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(hostdir, "client_binary", lambda: None)
            return materialize(scenario.hosts["spark-a"], scenario.user, tmp_path / "spark-a")
    built = materialize(scenario.hosts["spark-a"], scenario.user, tmp_path / "spark-a")
    assert (built / "bin" / "hostname").read_bytes()[:4] == b"\x7fELF", "no C compiler here"
    return built


@pytest.fixture
def server(host_dir: Path) -> Iterator[ToolServerProcess]:
    with ToolServerProcess(host_dir) as running:
        yield running


def sh(host_dir: Path, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(host_dir / "sandbox" / "launch"), command],
        env=sandbox_env(host_dir),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def start(host_dir: Path, command: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(host_dir / "sandbox" / "launch"), command],
        env=sandbox_env(host_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def hang(host_dir: Path, pattern: str | None) -> None:
    with locked_state(host_dir) as state:
        state["faults"]["hang"] = pattern


def tools_running(server: ToolServerProcess) -> list[int]:
    """The tool processes the server has forked and not yet reaped."""
    assert server.pid is not None
    return [
        int(pid)
        for task in Path(f"/proc/{server.pid}/task").iterdir()
        for pid in (task / "children").read_text().split()
    ]


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting: {what}")
        time.sleep(0.05)


@pytest.mark.slow
def test_tools_answer_exactly_as_when_run_on_their_own(host_dir: Path) -> None:
    alone = [sh(host_dir, command) for command in SAME_ANSWERS]
    with ToolServerProcess(host_dir) as server:
        served = [sh(host_dir, command) for command in SAME_ANSWERS]
        assert tools_running(server) == []
    for command, one, other in zip(SAME_ANSWERS, alone, served, strict=True):
        assert (other.stdout, other.stderr, other.returncode) == (
            one.stdout,
            one.stderr,
            one.returncode,
        ), command
    assert served[0].stdout == "spark-7d19\n" and served[4].stdout == "piped\n"
    assert served[5].returncode != 0 and served[6].returncode == 2


def test_a_killed_client_ends_its_tool(host_dir: Path, server: ToolServerProcess) -> None:
    hang(host_dir, "nvidia-smi")
    client = start(host_dir, "nvidia-smi")
    wait_until(lambda: tools_running(server), "the hanging tool to start")
    assert sh(host_dir, "pkill -0 -f '[n]vidia-smi'").returncode == 0  # looks like the tool
    os.killpg(client.pid, signal.SIGKILL)
    client.wait()
    wait_until(lambda: not tools_running(server), "the server to end the tool")
    assert sh(host_dir, "pkill -0 -f '[n]vidia-smi'").returncode == 1


@pytest.mark.parametrize("sig", ["TERM", "INT"])
def test_the_timeout_wrappers_signal_reaches_the_tool(
    host_dir: Path, server: ToolServerProcess, sig: str
) -> None:
    hang(host_dir, "nvidia-smi")
    result = sh(host_dir, f"timeout -s {sig} 1 nvidia-smi")
    assert result.returncode == 124
    wait_until(lambda: not tools_running(server), "the tool to end")


def test_a_hanging_tool_does_not_hold_up_the_others(
    host_dir: Path, server: ToolServerProcess
) -> None:
    hang(host_dir, "nvidia-smi")
    clients = [start(host_dir, "nvidia-smi") for _ in range(6)]
    try:
        wait_until(lambda: len(tools_running(server)) == 6, "six hanging tools")
        assert sh(host_dir, "hostname").stdout == "spark-7d19\n"
        assert sh(host_dir, "docker ps --format '{{.Names}}'").stdout == "vllm_node\n"
    finally:
        for client in clients:
            os.killpg(client.pid, signal.SIGTERM)
            client.wait()
    wait_until(lambda: not tools_running(server), "the server to end the six tools")


def test_stopping_the_server_ends_running_tools(host_dir: Path) -> None:
    hang(host_dir, "nvidia-smi")
    server = ToolServerProcess(host_dir)
    server.start()
    client = start(host_dir, "nvidia-smi")
    wait_until(lambda: tools_running(server), "the hanging tool to start")
    server.stop()
    _out, err = client.communicate(timeout=WAIT_S)
    assert client.returncode != 0 and "tool server went away" in err
    assert sh(host_dir, "pkill -0 -f '[n]vidia-smi'").returncode == 1


def test_a_malformed_request_is_refused_and_the_server_keeps_serving(
    host_dir: Path, server: ToolServerProcess
) -> None:
    run_dir = os.open(server.socket_path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(WAIT_S)
            sock.connect(f"/proc/self/fd/{run_dir}/{server.socket_path.name}")
            sock.sendall(b"\x00\x00\x00\x05hello")
            assert sock.recv(64) == b"x126\n"
    finally:
        os.close(run_dir)
    assert sh(host_dir, "hostname").stdout == "spark-7d19\n"


def test_output_streams_while_the_tool_is_still_running(
    host_dir: Path, server: ToolServerProcess
) -> None:
    """`curl` of an engine that sends one line, then waits: the line is there before curl ends."""
    release = threading.Event()

    class SlowEngine(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"first\n")
            self.wfile.flush()
            release.wait(WAIT_S)
            self.wfile.write(b"second\n")

        def log_message(self, *_args: object) -> None:
            pass

    engine = ThreadingHTTPServer(("127.0.0.1", 0), SlowEngine)
    threading.Thread(target=engine.serve_forever, daemon=True).start()
    (host_dir / "engine").mkdir(exist_ok=True)
    (host_dir / "engine" / "endpoints.json").write_text(
        json.dumps({"8000": engine.server_address[1]})
    )
    client = start(host_dir, "curl -s localhost:8000/stream")
    try:
        assert client.stdout is not None
        assert client.stdout.readline() == "first\n"
        assert client.poll() is None  # the engine holds the rest back until released
        release.set()
        assert client.stdout.read() == "second\n" and client.wait(WAIT_S) == 0
    finally:
        release.set()
        engine.shutdown()
        engine.server_close()


def full_pipe() -> tuple[int, int]:
    """A pipe whose buffer is already full: the next write to it would block."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    try:
        while True:
            os.write(write_end, b"x" * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(write_end, True)
    return read_end, write_end


def test_a_report_for_a_full_pipe_waits_for_its_reader(
    host_dir: Path, server: ToolServerProcess
) -> None:
    """The server answers `nvidia-smi -L` itself, but cannot write to a full pipe without
    blocking: a child writes it once the reader drains the pipe, and the server serves on."""
    expected = sh(host_dir, "nvidia-smi -L").stdout
    read_end, write_end = full_pipe()
    client = subprocess.Popen(
        [str(host_dir / "bin" / "nvidia-smi"), "-L"], stdout=write_end, cwd=host_dir / "home"
    )
    os.close(write_end)
    try:
        assert sh(host_dir, "hostname").stdout == "spark-7d19\n"  # not held up meanwhile
        with os.fdopen(read_end, "rb") as reader:
            data = reader.read()
        assert data.lstrip(b"x").decode() == expected
        assert client.wait(WAIT_S) == 0
    finally:
        client.kill()


def test_a_report_to_a_closed_pipe_ends_as_a_broken_pipe(
    host_dir: Path, server: ToolServerProcess
) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    client = subprocess.run(
        [str(host_dir / "bin" / "hostname")], stdout=write_end, cwd=host_dir / "home", check=False
    )
    os.close(write_end)
    assert client.returncode == 141
