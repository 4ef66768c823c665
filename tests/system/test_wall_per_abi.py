"""What the wall stops, class by class, on this kernel and as an older kernel would build it.

The helper builds its Landlock ruleset for the ABI it is given (host_helper.build_wall), and a
kernel enforces only what a ruleset handles, so a wall built for ABI 1 here is the wall Ubuntu
22.04's 5.15 gets (Landlock ABI 1: no truncate right, no TCP rules, no scopes); the seccomp
filter and the cut root powers are the same on both. Each case runs a real command inside the
wall, as root, on this machine's kernel; tools/wall/limits.py says the same in words.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.wall import host_helper
from tools.wall.limits import coverage

pytestmark = pytest.mark.system

KERNEL_ABI = host_helper.landlock_abi()
ABIS = sorted({abi for abi in (1, 4, 5, KERNEL_ABI) if 0 < abi <= KERNEL_ABI})
RUN = (
    "import sys; sys.path.insert(0, sys.argv[1]); import host_helper as h; "
    "sys.exit(h.main(['run', 'abi=' + sys.argv[2], '--', 'sh', '-c', sys.argv[3]]))"
)


def walled(abi: int, command: str) -> subprocess.CompletedProcess[str]:
    """`command` under sh inside the wall built for `abi`, on this kernel."""
    folder = str(Path(host_helper.__file__).parent)
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", RUN, folder, str(abi), command],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


@pytest.fixture(autouse=True)
def needs_landlock_and_root() -> None:
    if KERNEL_ABI < 1 or os.geteuid() != 0:
        pytest.skip("needs root on a kernel with Landlock")


def stopped(abi: int, kind: str) -> bool:
    return {c.kind: c.stopped for c in coverage(abi)}[kind]


@pytest.mark.parametrize("abi", ABIS)
def test_file_writes(abi: int, tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.write_text("original\n")
    for command in (f"echo x > {kept}", f"truncate -s 0 {kept}", f"rm {kept}", f"chmod 0 {kept}"):
        assert walled(abi, command).returncode != 0, command
    assert kept.read_text() == "original\n" and stopped(abi, "file write")


@pytest.mark.parametrize("abi", ABIS)
def test_network(abi: int) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        connect = f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))'"
        assert walled(abi, connect).returncode != 0 and stopped(abi, "other sockets")


@pytest.mark.parametrize("abi", ABIS)
def test_root_powers(abi: int) -> None:
    shown = walled(abi, "grep CapBnd /proc/self/status; unshare -n true")
    assert "0000000000000006" in shown.stdout and shown.returncode != 0  # no CAP_SYS_ADMIN
    assert stopped(abi, "root powers")


@pytest.fixture
def outsider() -> Iterator[subprocess.Popen[bytes]]:
    """A process of the same user (root) outside the wall."""
    process = subprocess.Popen(["sleep", "300"])
    try:
        yield process
    finally:
        process.kill()
        process.wait(timeout=30)


@pytest.mark.parametrize("abi", ABIS)
def test_signals(abi: int, outsider: subprocess.Popen[bytes]) -> None:
    walled(abi, f"kill -TERM {outsider.pid}")
    with contextlib.suppress(subprocess.TimeoutExpired):  # a signal let through may land late
        outsider.wait(timeout=5)
    alive = outsider.poll() is None
    assert alive is stopped(abi, "signals")  # a PID namespace (root), or scoped from ABI 6
    if not alive:
        assert outsider.returncode == -signal.SIGTERM


@pytest.mark.parametrize("abi", ABIS)
def test_daemon_sockets_are_stopped(abi: int, tmp_path: Path) -> None:
    path = tmp_path / "control.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen()
        connect = f"python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"{path}\")'"
        assert walled(abi, connect).returncode != 0
    assert stopped(abi, "daemon socket")


@pytest.mark.parametrize("abi", ABIS)
def test_abstract_sockets_are_stopped(abi: int) -> None:
    """An abstract Unix socket (a D-Bus bus, containerd's shim): no path, so no file rule
    reaches it; seccomp refuses the socket on every ABI, Landlock scopes it from ABI 6."""
    name = f"scout-wall-abstract-{os.getpid()}-{abi}"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind("\0" + name)
        server.listen()
        connect = (
            "python3 -c 'import socket; "
            f'socket.socket(socket.AF_UNIX).connect("\\0{name}"); print("OPEN")\''
        )
        shown = walled(abi, connect)
        assert shown.returncode != 0 and "OPEN" not in shown.stdout
        bare = subprocess.run(["sh", "-c", connect], capture_output=True, text=True, timeout=60)
        assert "OPEN" in bare.stdout
    assert stopped(abi, "abstract socket")
