"""The wall around a simulated host's commands holds even for a real Python run by path.

A walled-in script (what Scout's commands and jobs are: `timeout … sh -c '…'`) may execute the
Python that the fake tools' clients use. With it, or with the dynamic loader running any program
of the machine, it still may not reach a Unix socket, a TCP port or an abstract socket outside
the simulator, signal a process the simulator did not start, write outside its own host's home
and tmp folders (not a peer's, not its own host's state or sandbox), or change a file's mode.
Each test makes the target outside the simulator itself and checks it is untouched.
"""

from __future__ import annotations

import os
import secrets
import shlex
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import sim
from sim.cluster import SimCluster
from sim.exec_allow import elf_interpreter
from sim.fakehost import landlock
from tools.jobs.host import start_job, stop_jobs
from tools.ssh import SSHPool

PYTHON = os.path.realpath(sys.executable)
LOADER = elf_interpreter(PYTHON)

pytestmark = pytest.mark.skipif(
    landlock.abi_version() < 6, reason="the host's wall needs Landlock ABI 6 (Linux 6.12+)"
)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    kept = tmp_path / "outside"
    kept.mkdir()
    (kept / "x").write_text("keep")
    (kept / "x").chmod(0o644)
    return kept


def python(code: str) -> str:
    """A shell command that runs `code` in the machine's real Python, by path."""
    return f"{shlex.quote(PYTHON)} -c {shlex.quote(code)}"


def refused(stream: socket.socket) -> bool:
    """True if nobody connected to this listener."""
    stream.setblocking(False)
    try:
        conn, _addr = stream.accept()
    except BlockingIOError:
        return True
    conn.close()
    return False


@pytest.fixture
def unix_listener(tmp_path: Path) -> Iterator[tuple[str, socket.socket]]:
    path = str(tmp_path / "outside.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(path)
        listener.listen()
        yield path, listener


@pytest.fixture
def tcp_listener() -> Iterator[tuple[int, socket.socket]]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1], listener


async def test_python_cannot_reach_a_unix_socket_outside(
    pool: SSHPool, unix_listener: tuple[str, socket.socket]
) -> None:
    path, listener = unix_listener
    connect = f"import socket; socket.socket(socket.AF_UNIX).connect({path!r})"
    datagram = (
        "import socket; a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); "
        f"a.sendto(b'x', {path!r})"
    )
    for code in (connect, datagram):
        result = await pool.run("spark-a", python(code))
        assert result.exit_status == 1
        assert "PermissionError: [Errno 13] Permission denied" in result.stderr
    assert refused(listener)


async def test_python_and_bash_cannot_open_tcp(
    pool: SSHPool, tcp_listener: tuple[int, socket.socket]
) -> None:
    port, listener = tcp_listener
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"
    result = await pool.run("spark-a", python(code))
    bash = await pool.run("spark-a", f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")

    assert result.exit_status == 1 and "PermissionError" in result.stderr
    assert bash.exit_status != 0 and "connected" not in bash.stdout
    assert refused(listener)


async def test_python_cannot_reach_an_abstract_socket(pool: SSHPool) -> None:
    name = f"\0scout-test-{secrets.token_hex(4)}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(name)
        listener.listen()
        code = f"import socket; socket.socket(socket.AF_UNIX).connect({name!r})"
        result = await pool.run("spark-b", python(code))

        assert result.exit_status == 1 and "PermissionError" in result.stderr
        assert refused(listener)


async def test_nothing_inside_can_signal_a_process_outside(pool: SSHPool) -> None:
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        code = f"import os, signal; os.kill({sleeper.pid}, signal.SIGKILL)"
        by_python = await pool.run("spark-a", python(code))
        by_loader = await pool.run("spark-a", f"{LOADER} /bin/kill -9 {sleeper.pid}")
        by_fake_kill = await pool.run("spark-a", f"kill -9 {sleeper.pid}")

        assert "PermissionError: [Errno 1] Operation not permitted" in by_python.stderr
        assert by_loader.exit_status != 0
        assert f"kill: ({sleeper.pid}) - No such process" in by_fake_kill.stderr
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()


async def test_writes_stay_in_the_hosts_own_home(
    cluster: SimCluster, pool: SSHPool, outside: Path
) -> None:
    head, peer = cluster.host_dir("spark-a"), cluster.host_dir("spark-b")
    targets = [
        peer / "home" / "planted",
        head / "sandbox" / "launch",
        head / "state.json",
        head / "bin" / "nvidia-smi",
        outside / "x",
        outside / "new",
    ]
    before = {path: path.read_bytes() for path in targets if path.exists()}
    for path in targets:
        result = await pool.run("spark-a", python(f"open({str(path)!r}, 'a').write('x')"))
        shell = await pool.run("spark-a", f"echo x >> {shlex.quote(str(path))}")
        assert "PermissionError" in result.stderr, path
        assert "Permission denied" in shell.stderr, path
    loader = await pool.run("spark-a", f"{LOADER} /usr/bin/touch {outside}/by-loader")
    inside = await pool.run("spark-a", python("open('made-here', 'w').write('fine')"))

    assert loader.exit_status != 0
    assert {path: path.read_bytes() for path in targets if path.exists()} == before
    assert sorted(p.name for p in outside.iterdir()) == ["x"]
    assert not (peer / "home" / "planted").exists()
    assert inside.exit_status == 0 and (head / "home" / "made-here").read_text() == "fine"


async def test_file_modes_and_owners_cannot_change(pool: SSHPool, outside: Path) -> None:
    code = f"import os; os.chmod({str(outside / 'x')!r}, 0o777)"
    result = await pool.run("spark-a", python(code))

    assert "PermissionError: [Errno 1] Operation not permitted" in result.stderr
    assert stat.S_IMODE((outside / "x").stat().st_mode) == 0o644


async def test_a_command_without_its_broker_cannot_reach_the_tool_server(pool: SSHPool) -> None:
    """The fake tools are reached only through the descriptor the server handed in: a socket
    of the command's own is refused, so closing the broker leaves no way to the server."""
    result = await pool.run("spark-a", "hostname; exec 1000>&-; hostname")

    assert result.stdout == "spark-7d19\n"
    assert "hostname: cannot reach the tool server of this simulated host" in result.stderr


async def test_a_command_cannot_launch_commands_through_its_broker(
    cluster: SimCluster, pool: SSHPool
) -> None:
    """Only the simulator, on the server's socket, may ask for a new command of the host."""
    sim_dir = Path(sim.__file__).parent
    code = (
        f"import socket, sys; sys.path.insert(0, {str(sim_dir)!r}); "
        "from fakehost.wire import BROKER_FD, LAUNCH, encode_request; "
        "broker = socket.socket(fileno=BROKER_FD); ours, theirs = socket.socketpair(); "
        "fd = theirs.fileno().to_bytes(4, sys.byteorder); "
        "broker.sendmsg([b'c'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fd)]); "
        "request = encode_request(LAUNCH, b'', b'', [b'hostname'], []); "
        "ours.sendall(request); print(ours.recv(64))"
    )
    result = await pool.run("spark-a", python(code))
    log = (cluster.host_dir("spark-a") / "run" / "server.log").read_text()

    assert result.stdout == "b'x126\\n'\n"
    assert "a command may not launch commands through its broker" in log


async def test_a_client_cannot_point_its_tools_at_a_peer(
    cluster: SimCluster, pool: SSHPool
) -> None:
    peer = cluster.host_dir("spark-b")
    result = await pool.run("spark-a", "hostname", env={"SCOUT_SIM_HOST_DIR": str(peer)})

    assert result.stdout == "spark-7d19\n"


async def test_jobs_still_start_and_stop_inside_the_wall(pool: SSHPool) -> None:
    """A job outlives the command that started it, in a Landlock domain of that command; a later
    command still signals it, through the fake `kill` in the host's own domain."""
    started = await start_job(pool, "spark-a", "sleeper", "sleep 600")
    alive = await pool.run("spark-a", f"kill -0 {started.pid} && echo running")
    stopped = await stop_jobs(pool, "spark-a", ["sleeper"], grace_s=5)
    gone = await pool.run("spark-a", f"kill -0 {started.pid} || echo gone")

    assert alive.stdout == "running\n"
    assert stopped == {"sleeper": "terminated"}
    assert gone.stdout == "gone\n"
