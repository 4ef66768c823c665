"""Every channel the wall closes, one probe each, over real OpenSSH on this machine's kernel.

Each probe is a command that, if it succeeds, prints OPEN (or leaves a trace the test finds):
a daemon's pathname socket, D-Bus on a private bus, a syslog datagram, SysV IPC, a POSIX
message queue, a key, a process left running, TCP to a named port on a non-loopback address in
the head's network namespace, a device open through /proc/self/root/dev, a signal to an outside
process. The command runs as root on the head (an sshd in a network namespace) inside the wall
built for Landlock ABI 1, 4, 5 and this kernel's own (WallSpec.max_abi); every probe must be
closed at each, and the same probe without the wall must get through (or the test could not
fail). tools/wall/limits.py says the same per channel: nothing here is listed as open.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.support.private_bus import private_bus as started_bus
from tests.support.processes import sleepers
from tests.support.sshd_topology import Topology
from tools.ssh import Inventory, SSHPool
from tools.wall import WallSpec
from tools.wall.host_landlock import landlock_abi
from tools.wall.limits import coverage

pytestmark = pytest.mark.system

KERNEL_ABI = landlock_abi()
ABIS = sorted({abi for abi in (1, 4, 5, KERNEL_ABI) if 0 < abi <= KERNEL_ABI})
PY = "python3 -c"
ADD_KEY = (
    f"{PY} 'import ctypes; l = ctypes.CDLL(None, use_errno=True); "
    'n = l.syscall(248, b"user", b"scout-wall-test", b"x", 1, -2); print("OPEN" if n > 0 else '
    '"closed", ctypes.get_errno())\''
)
MQ_OPEN = (
    f"{PY} 'import ctypes, os; l = ctypes.CDLL(None, use_errno=True); "
    'n = l.syscall(240, b"scout-wall-test-{tag}", os.O_CREAT | os.O_RDWR, 0o600, None); '
    'print("OPEN" if n >= 0 else "closed"); n >= 0 and l.syscall(241, b"scout-wall-test-{tag}")\''
)
SYSV = "for kind in -Q '-S 1' '-M 4096'; do ipcmk $kind && echo OPEN; done"
UNIX_CONNECT = (
    f'{PY} \'import socket; s = socket.socket(socket.AF_UNIX); s.connect("{{path}}"); '
    's.sendall(b"POST /containers/create HTTP/1.1\\r\\n\\r\\n"); print("OPEN")\''
)
SYSLOG = (
    f"{PY} 'import socket; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); "
    's.sendto(b"<13>scout-wall-test", "{path}"); print("OPEN")\''
)
DBUS = (
    "dbus-send --bus={address} --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus "
    "org.freedesktop.DBus.ListNames && echo OPEN"
)
TCP = (
    "curl -s -m 5 http://127.0.0.1:{port}/ >/dev/null && echo LOOPBACK; "
    f'{PY} \'import socket; socket.create_connection(("{{address}}", {{port}}), 5); '
    'print("OPEN")\''
)
DEVICE = f'{PY} \'open("/proc/self/root/dev/{{name}}", "rb"); print("OPEN")\''
LINGER = "setsid sleep {seconds} >/dev/null 2>&1 < /dev/null & sleep 0.2; echo started"
SIGNAL = "kill -TERM {pid} && echo OPEN"


@pytest.fixture(autouse=True)
def needs_landlock_and_root() -> None:
    if KERNEL_ABI < 1 or os.geteuid() != 0:
        pytest.skip("needs root on a kernel with Landlock")


@pytest.fixture
async def pool(sshd_topology: Topology) -> AsyncIterator[SSHPool]:
    async with SSHPool(Inventory.from_dict(sshd_topology.inventory_data())) as opened:
        yield opened


async def on_head(pool: SSHPool, command: str, abi: int | None, ports: tuple[int, ...] = ()) -> str:
    """`command` on the head, inside the wall built for `abi` (None: without the wall)."""
    wall = None if abi is None else WallSpec(ports=ports, scratch=True, max_abi=abi)
    result = await pool.run("head", command, timeout=30, wall=wall)
    assert result.unwalled is None, result.unwalled
    if abi is not None:
        said = await pool.run("head", 'echo "$SCOUT_WALL"', wall=wall)
        assert f"landlock-abi-{abi}" in said.stdout
    return result.stdout + result.stderr


@contextlib.contextmanager
def unix_server(path: Path, kind: int) -> Iterator[socket.socket]:
    server = socket.socket(socket.AF_UNIX, kind)
    server.bind(str(path))
    if kind == socket.SOCK_STREAM:
        server.listen()
    server.settimeout(0.5)
    try:
        yield server
    finally:
        server.close()


def received(server: socket.socket) -> bool:
    try:
        if server.type == socket.SOCK_STREAM:
            server.accept()[0].close()
        else:
            server.recv(100)
    except TimeoutError:
        return False
    return True


@pytest.mark.parametrize("abi", ABIS)
async def test_unix_sockets_are_closed(abi: int, pool: SSHPool, tmp_path: Path) -> None:
    daemon, log = tmp_path / "docker.sock", tmp_path / "log"
    with (
        unix_server(daemon, socket.SOCK_STREAM) as control,
        unix_server(log, socket.SOCK_DGRAM) as syslog,
    ):
        for probe, server in ((UNIX_CONNECT.format(path=daemon), control),
                              (SYSLOG.format(path=log), syslog)):  # fmt: skip
            walled = await on_head(pool, probe, abi)
            assert "OPEN" not in walled and "Permission denied" in walled
            assert not received(server)
            assert "OPEN" in await on_head(pool, probe, None) and received(server)
    for kind in ("daemon socket", "syslog"):
        assert {c.kind: c.stopped for c in coverage(abi)}[kind]


@pytest.fixture
def private_bus() -> Iterator[str]:
    """A private D-Bus daemon on a pathname socket (dbus-daemon, as a desktop session's)."""
    if shutil.which("dbus-daemon") is None or shutil.which("dbus-send") is None:
        pytest.skip("dbus-daemon is not installed here (apt-get install dbus)")
    with started_bus() as address:
        yield address


@pytest.mark.parametrize("abi", ABIS)
async def test_d_bus_is_closed(abi: int, pool: SSHPool, private_bus: str) -> None:
    probe = DBUS.format(address=private_bus)
    assert "OPEN" not in await on_head(pool, probe, abi)
    assert "OPEN" in await on_head(pool, probe, None)


def _ipc_ids() -> set[tuple[str, str]]:
    """(kind flag, id) of every SysV IPC object: -q queues, -s semaphores, -m shared memory."""
    found = set()
    for flag in ("-q", "-s", "-m"):
        shown = subprocess.run(["ipcs", flag], capture_output=True, text=True, check=True)
        found |= {(flag, line.split()[1]) for line in shown.stdout.splitlines() if line[:2] == "0x"}
    return found


@pytest.mark.parametrize("abi", ABIS)
async def test_ipc_objects_and_keys_cannot_be_made(abi: int, pool: SSHPool) -> None:
    tag = uuid.uuid4().hex[:8]
    before = _ipc_ids()
    walled = await on_head(pool, SYSV, abi)
    assert "OPEN" not in walled and _ipc_ids() == before
    for probe in (MQ_OPEN.format(tag=tag), ADD_KEY):
        assert "OPEN" not in await on_head(pool, probe, abi), probe
    bare = await on_head(pool, SYSV, None)
    made = _ipc_ids() - before
    for flag, ident in made:  # the control's own objects, removed by their ids
        subprocess.run(["ipcrm", flag, ident], capture_output=True, timeout=30)
    assert bare.count("OPEN") == 3 and len(made) == 3
    assert "OPEN" in await on_head(pool, MQ_OPEN.format(tag=tag), None)
    assert "OPEN" in await on_head(pool, ADD_KEY, None)


@pytest.mark.parametrize("abi", ABIS)
async def test_nothing_outlives_the_call(abi: int, pool: SSHPool) -> None:
    seconds = f"{900 + abi}.{uuid.uuid4().int % 10_000}"
    await on_head(pool, LINGER.format(seconds=seconds), abi)
    assert sleepers(seconds) == []
    await on_head(pool, LINGER.format(seconds=seconds), None)
    left = sleepers(seconds)
    for pid in left:  # the control's own sleeper, by its pid
        os.kill(pid, 9)
    assert len(left) == 1


async def test_the_wall_ends_the_command_and_what_it_started_at_the_time_limit(
    pool: SSHPool,
) -> None:
    """The helper keeps the limit itself (no `timeout` around it): at the limit the command
    and what it left running end, and the call reads as timed out (exit 124)."""
    seconds = f"{800}.{uuid.uuid4().int % 10_000}"
    command = f"setsid sleep {seconds} >/dev/null 2>&1 < /dev/null & sleep {seconds}; echo LATE"
    result = await pool.run("head", command, timeout=1, wall=WallSpec(scratch=True))
    assert result.walled and result.timed_out and result.exit_status == 124
    assert "LATE" not in result.stdout and sleepers(seconds) == []


@pytest.fixture
def outsider() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "300"])
    try:
        yield process
    finally:
        process.kill()
        process.wait(timeout=30)


@pytest.mark.parametrize("abi", ABIS)
async def test_no_signal_reaches_an_outside_process(
    abi: int, pool: SSHPool, outsider: subprocess.Popen[bytes]
) -> None:
    walled = await on_head(pool, SIGNAL.format(pid=outsider.pid), abi)
    time.sleep(0.3)
    assert "OPEN" not in walled and outsider.poll() is None


DEVICES = ("cpu_dma_latency", "kvm", "loop-control", "hwrng", "watchdog", "mem")


@pytest.mark.parametrize("abi", ABIS)
async def test_devices_beyond_the_read_safe_list_do_not_open(abi: int, pool: SSHPool) -> None:
    name = next((n for n in DEVICES if Path("/dev", n).exists()), None)
    if name is None:
        pytest.skip("none of these device nodes here: " + ", ".join(DEVICES))
    probe = DEVICE.format(name=name)
    walled = await on_head(pool, probe, abi)
    assert "OPEN" not in walled and "Permission denied" in walled
    assert "OPEN" in await on_head(pool, probe, None)
    safe = await on_head(pool, "head -c 4 /dev/urandom | wc -c; cat /proc/loadavg", abi)
    assert safe.startswith("4")  # the read-safe list and plain files still read


@pytest.mark.parametrize("abi", ABIS)
async def test_a_device_behind_a_symlink_does_not_open(
    abi: int, pool: SSHPool, tmp_path: Path
) -> None:
    """The gate sees `cat ~/repo/notes.txt`, a read; a repository can make that file a link to
    a device. The kernel resolves the link, so the wall judges the file it reaches."""
    name = next((n for n in DEVICES if Path("/dev", n).exists()), None)
    if name is None:
        pytest.skip("none of these device nodes here: " + ", ".join(DEVICES))
    link = tmp_path / "notes.txt"
    link.symlink_to(f"/dev/{name}")
    probe = f'{PY} \'open("{link}", "rb"); print("OPEN")\''
    walled = await on_head(pool, probe, abi)
    assert "OPEN" not in walled and "Permission denied" in walled
    assert "OPEN" in await on_head(pool, probe, None)


@pytest.fixture
def listener(sshd_topology: Topology) -> Iterator[int]:
    """An HTTP server in the head's namespace on every address: loopback and its link's."""
    namespace = sshd_topology.head.namespace
    server = subprocess.Popen(
        ["ip", "netns", "exec", namespace, "python3", "-c",
         "import http.server as h, sys; s = h.HTTPServer(('0.0.0.0', 0), h.BaseHTTPRequestHandler);"
         " print(s.server_address[1], flush=True); s.serve_forever()"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        yield int(server.stdout.readline())
    finally:
        server.kill()
        server.wait(timeout=30)


@pytest.mark.parametrize("abi", ABIS)
async def test_a_named_port_is_reached_on_loopback_only(
    abi: int, pool: SSHPool, sshd_topology: Topology, listener: int
) -> None:
    probe = TCP.format(port=listener, address=sshd_topology.head.address)
    walled = await on_head(pool, probe, abi, ports=(listener,))
    assert "LOOPBACK" in walled and "OPEN" not in walled
    assert "OPEN" in await on_head(pool, probe, None)
