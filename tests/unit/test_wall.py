"""The wall's pure parts: the command line it sends, the ports a read may reach, the read shapes
that run unwalled, the seccomp program, and what it stops per kernel."""

from __future__ import annotations

import struct

import pytest

from tools.wall import HostWalls, WallSpec
from tools.wall.command import HELPER_HASH, split_sudo, unwalled_reason, walled_line
from tools.wall.host_helper import ARCHES, UNWALLED_MARK, UNWALLED_STATUS, seccomp_program
from tools.wall.limits import coverage
from tools.wall.narrow import allowed_unwalled
from tools.wall.network import RAY_GCS_PORT, needed_ports


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("nvidia-smi -L", True),
        ("nvidia-smi   --query-gpu=name,memory.used --format=csv,noheader", True),
        ("cat /proc/meminfo", True),
        ("ip -j addr show dev enp1s0f1np1", True),
        ("nvidia-smi -pm 1", False),
        ("nvidia-smi -L > /tmp/x", False),
        ("cat /proc/meminfo; rm -rf ~", False),
        ("cat /etc/shadow", False),
        ("ip link set enp1s0f1np1 up", False),
        ("docker ps $(touch x)", False),
        ("uname -a | sh", False),
    ],
)
def test_only_exact_read_shapes_run_unwalled(command: str, allowed: bool) -> None:
    assert allowed_unwalled(command) is allowed


@pytest.mark.parametrize(
    ("command", "ports"),
    [
        ("curl -s http://127.0.0.1:8000/health", (8000,)),
        ("curl http://localhost/v1/models", (80,)),
        ("curl -s localhost:8000/health", (8000,)),
        ("curl -s spark-a:30000/v1/models", (30000,)),
        ("curl -s example.org:8000/", ()),
        ("ping 127.0.0.1", ()),
        ("curl -s http://10.1.230.180:8000/v1/models", (8000,)),
        ("curl -s http://203.0.113.7:8000/v1/models", ()),
        ("curl https://huggingface.co/api/models", ()),
        ("ray status", (RAY_GCS_PORT,)),
        ("cat /proc/meminfo", ()),
        ("echo 'unclosed", ()),
    ],
)
def test_a_read_reaches_only_ports_it_names_on_loopback_or_inventory(
    command: str, ports: tuple[int, ...]
) -> None:
    assert needed_ports(command, {"10.1.230.180", "spark-a"}) == ports


def test_the_wall_goes_on_after_sudo_and_names_the_helper_by_its_hash() -> None:
    assert split_sudo("sudo -n ip -s link") == (True, "ip -s link")
    assert split_sudo("sudo ip link") == (False, "sudo ip link")  # may prompt: not split
    assert split_sudo("sudo -n -u bob id") == (False, "sudo -n -u bob id")
    line = walled_line("id", WallSpec(), timeout="timeout 5s", sudo=True, install=False)
    assert f"wall-{HELPER_HASH}.py" in line
    assert line.index("sudo -n") < line.index("timeout 5s") < line.index("python3 -I -S")
    assert "printf" not in line  # the helper is only named, not sent
    assert "printf" in walled_line("id", WallSpec(), timeout="t", sudo=False, install=True)


def test_a_refusal_of_the_helper_is_told_apart_from_the_command_exiting() -> None:
    said = f"{UNWALLED_MARK} no Landlock in this kernel\n"
    assert unwalled_reason(UNWALLED_STATUS, said) == "no Landlock in this kernel"
    assert unwalled_reason(1, said) is None
    assert unwalled_reason(UNWALLED_STATUS, "a command that exits 199\n") is None


@pytest.mark.parametrize("arch", sorted(ARCHES))
@pytest.mark.parametrize("tcp", [False, True])
def test_the_seccomp_program_is_well_formed(arch: str, tcp: bool) -> None:
    program = seccomp_program(arch, tcp)
    assert len(program) % 8 == 0
    count = len(program) // 8
    for pc in range(count):
        code, jt, jf, _k = struct.unpack("=HBBI", program[pc * 8 : pc * 8 + 8])
        if code & 0x07 == 0x05:  # a conditional jump lands inside the program
            assert pc + 1 + jt < count and pc + 1 + jf < count
        else:
            assert jt == jf == 0
    last = struct.unpack("=HBBI", program[-8:])[0]
    assert last == 0x06  # it ends in a return


def test_what_the_wall_stops_grows_with_the_landlock_abi() -> None:
    old = {c.kind: c.stopped for c in coverage(1)}
    new = {c.kind: c.stopped for c in coverage(7)}
    assert old == {
        "file write": True,
        "network": True,
        "root powers": True,
        "signals": False,
        "daemon sockets": False,
        "device ioctls": False,
    }
    assert new == {**old, "signals": True}


def test_a_host_found_without_a_wall_is_news_once() -> None:
    walls = HostWalls()
    assert walls.record("a", True, "landlock-abi-7") is False
    assert walls.record("b", False, "no Landlock") is True
    assert walls.record("b", False, "no Landlock") is False
    assert walls.unwalled(["a", "b", "c"]) == {"b": "no Landlock"}
