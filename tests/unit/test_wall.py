"""The wall's pure parts: the command line it sends, the ports a read may reach, the read shapes
that run unwalled, the seccomp program, and what it stops per kernel."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import cast

import pytest

from agent.safety.shell.judge import inventory_judge
from tools.risk.assessment import Risk
from tools.ssh.pool import SSHPool
from tools.ssh_exec import SSHExec, SSHExecInput
from tools.wall import HostWalls, WallSpec
from tools.wall.command import (
    HELPER_FILES,
    HELPER_HASH,
    MISSING_MARK,
    server_line,
    split_sudo,
    unwalled_reason,
    walled_line,
)
from tools.wall.daemons import (
    daemon_client,
    docker_change_verb,
    outside_read,
    process_detail_reader,
    unproxied_client,
)
from tools.wall.host_helper import UNWALLED_MARK, UNWALLED_STATUS
from tools.wall.host_netfilter import program
from tools.wall.host_seccomp import ARCHES, DENIED, seccomp_program, syscall_numbers
from tools.wall.limits import MATRIX, PROBED_BY, coverage, described_coverage
from tools.wall.narrow import allowed_unwalled
from tools.wall.network import RAY_GCS_PORT, needed_addresses, needed_ports


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
    line = walled_line("id", WallSpec(), timeout=5, sudo=True, install=False)
    assert f"wall-{HELPER_HASH}" in line
    assert line.index("sudo -n") < line.index("python3 -I -S") < line.index("limit=5")
    assert "printf" not in line  # the helper is only named, not sent
    assert "printf" in walled_line("id", WallSpec(), timeout=1, sudo=False, install=True)


def test_the_fork_server_is_the_same_helper_named_the_same_and_ships_with_it() -> None:
    line = server_line(install=False)
    assert f"wall-{HELPER_HASH}" in line and line.endswith('"$H" serve')
    assert MISSING_MARK in line and "printf" not in line
    installing = server_line(install=True)
    assert all(name in installing for name in HELPER_FILES) and "host_server.py" in HELPER_FILES


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


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_every_refused_call_has_a_number_on_every_arch_that_has_it(arch: str) -> None:
    numbers = syscall_numbers(arch)
    for name in ("msgget", "semget", "shmget", "mq_open", "add_key", "keyctl", "socket"):
        assert name in numbers, (arch, name)
    assert len(set(numbers.values())) == len(numbers)  # no two names share a number
    assert {"msgget", "mq_open", "add_key"} <= set(DENIED)


def test_only_device_ioctls_stay_open_for_root_on_a_cgroup2_host_at_every_abi() -> None:
    for abi in (1, 4, 5, 7):
        open_here = {c.kind for c in coverage(abi) if not c.stopped}
        assert open_here == {"device ioctls"}, abi


def test_without_root_what_stays_open_depends_on_the_abi_and_says_what_it_needs() -> None:
    old = {c.kind: c for c in coverage(1, root=False)}
    assert {k for k, c in old.items() if not c.stopped} == {
        "signals", "tcp port", "tcp address", "device ioctls"
    }  # fmt: skip
    assert "Landlock ABI 6" in old["signals"].how and "root" in old["tcp address"].how
    new = {c.kind for c in coverage(6, root=False) if not c.stopped}
    assert new == {"tcp address", "device ioctls"}


@pytest.mark.parametrize("v6", [False, True])
def test_the_address_filter_program_jumps_inside_itself_and_ends_in_exit(v6: bool) -> None:
    code = program(v6, ["10.1.230.180", "fd00::5"], [8000, 6379])
    count = len(code) // 8
    for pc in range(count):
        op, _regs, offset, _imm = struct.unpack("<BBhi", code[pc * 8 : pc * 8 + 8])
        if op & 0x07 in (0x05, 0x06) and op != 0x95:  # a jump lands inside the program
            assert 0 <= pc + 1 + offset < count
    assert code[-8] == 0x95


def test_a_read_reaches_only_the_inventory_addresses_it_names() -> None:
    book = {"spark-a": "10.1.230.180", "10.1.230.180": "10.1.230.180", "spark-b": "n.example"}
    assert needed_addresses("curl -s spark-a:30000/v1/models", book) == ("10.1.230.180",)
    assert needed_addresses("curl http://10.1.230.180:8000/x", book) == ("10.1.230.180",)
    assert needed_addresses("curl http://203.0.113.7:8000/x", book) == ()
    assert needed_addresses("curl http://spark-b:8000/x", book) == ()  # no address given


@pytest.mark.parametrize(
    ("command", "client", "read"),
    [
        ("docker ps --format '{{.Names}} {{.Status}}'", "docker", False),  # walled, proxied
        ("timeout 20 docker stats --no-stream --format '{{json .}}'", "docker", False),
        ("systemctl status nvidia-persistenced", "systemctl", False),  # walled, proxied
        ("docker ps; docker rm -f x", "docker", False),
        ("ss -tlnp", None, True),
        ("ss -K dst 10.0.0.5", None, False),
        ("fuser -k /dev/nvidia0", None, False),
        ("kubectl get pods -A", "kubectl", True),
        ("kubectl delete pod x", "kubectl", False),
        ("nmcli connection show", "nmcli", False),  # walled, proxied
        ("journalctl -u docker --no-pager -n 50", "journalctl", True),  # files, no bus
        ("nmcli con up eth0", "nmcli", False),
        ("curl --unix-socket /var/run/docker.sock http://x/containers/json", None, False),
        ("FOO=1 /usr/bin/systemctl stop x", "systemctl", False),
        ("echo $(nmcli c up eth0)", "nmcli", False),
        ("sudo -n timeout 5 busctl call org.x /x org.x M", "busctl", False),
        ("grep docker /etc/group", None, False),
    ],
)
def test_daemon_clients_are_found_and_only_exact_reads_pass(
    command: str, client: str | None, read: bool
) -> None:
    assert daemon_client(command) == client
    assert outside_read(command) is read


@pytest.mark.parametrize(
    ("command", "unproxied"),
    [
        ("docker ps -a --format '{{.Names}}'", None),
        ("docker --log-level debug --config /tmp/c inspect x", None),
        ("docker rm -f x", None),  # it goes to the proxy, and fails there
        ("docker ps -c 1", None),  # an option after the verb names no daemon
        ("docker -H tcp://10.0.0.5:2375 ps", "docker"),
        ("docker -Hunix:///var/run/docker.sock ps", "docker"),
        ("docker --host=127.0.0.1:2375 ps", "docker"),
        ("sudo -n docker -c remote ps", "docker"),
        ("docker --context=remote ps", "docker"),
        ("DOCKER_HOST=tcp://127.0.0.1:2375 docker ps", "docker"),
        ("export DOCKER_CONTEXT=x; docker ps", "docker"),
        ("docker ps; systemctl status x", None),
        ("nmcli device", None),
        ("docker ps; kubectl get pods", "kubectl"),
        ("grep docker /etc/group", None),
    ],
)
def test_only_docker_pointed_at_the_wall_s_proxy_counts_as_proxied(
    command: str, unproxied: str | None
) -> None:
    assert unproxied_client(command) == unproxied


def test_docker_reads_run_unasked_through_the_proxy_and_a_docker_sent_elsewhere_asks() -> None:
    tool = SSHExec(cast(SSHPool, None), inventory_judge([]))
    for read in ("docker ps -a --no-trunc", "docker logs --since 10m -n 20 vllm_node",
                 "docker inspect -f '{{.State.Health.Status}}' vllm_node"):  # fmt: skip
        assert tool.risk(SSHExecInput(host="h", command=read)).risk == Risk.READ_ONLY, read
    elsewhere = tool.risk(SSHExecInput(host="h", command="docker -H 127.0.0.1:2375 ps"))
    assert elsewhere.risk > Risk.READ_ONLY and "read-only proxy" in elsewhere.reason


@pytest.mark.parametrize(
    ("command", "verb"),
    [
        ("docker ps -a", None),
        ("sudo -n docker stats --no-stream", None),
        ("docker -l debug --config /x image inspect a", None),
        ("docker container ls -q", None),
        ("docker logs -f x", None),  # a read verb: the proxy refuses the stream with its reason
        ("docker --help", None),
        ("docker exec vllm_node nvidia-smi", "exec"),
        ("docker container exec x ls", "container exec"),
        ("docker image rm a", "image rm"),
        ("docker system prune -f", "system prune"),
        ("docker ps; docker rm x", "rm"),
        ("docker cp x:/a -", "cp"),
    ],
)
def test_a_docker_verb_the_proxy_would_refuse_is_found(command: str, verb: str | None) -> None:
    assert docker_change_verb(command) == verb


def test_docker_exec_asks_rather_than_fail_at_the_proxy() -> None:
    tool = SSHExec(cast(SSHPool, None), inventory_judge([]))
    asked = tool.risk(SSHExecInput(host="h", command="docker exec vllm_node nvidia-smi"))
    assert asked.risk == Risk.MUTATING and "docker exec is no read" in asked.reason


def test_docker_asks_on_a_host_whose_wall_cannot_hold_the_proxy_s_port() -> None:
    walls = HostWalls()
    walls.record("old-user", True, "landlock-abi-1,seccomp,no-new-privs,subreaper")
    walls.record(
        "old-root", True, "landlock-abi-1,seccomp,no-new-privs,pid-namespace,root-read-only"
    )
    walls.record("new-user", True, "landlock-abi-4,seccomp,no-new-privs,subreaper")
    tool = SSHExec(cast(SSHPool, None), inventory_judge([]), walls)
    risks = {
        host: tool.risk(SSHExecInput(host=host, command="docker ps")).risk
        for host in ("old-user", "old-root", "new-user", "unknown")
    }
    assert risks == {
        "old-user": Risk.MUTATING, "old-root": Risk.READ_ONLY,
        "new-user": Risk.READ_ONLY, "unknown": Risk.READ_ONLY,
    }  # fmt: skip
    reason = tool.risk(SSHExecInput(hosts=["new-user", "old-user"], command="docker ps")).reason
    assert "old-user's wall cannot hold docker's read-only proxy" in reason
    assert tool.risk(SSHExecInput(host="old-user", command="uptime")).risk == Risk.READ_ONLY


def test_a_host_found_without_a_wall_is_news_once() -> None:
    walls = HostWalls()
    assert walls.record("a", True, "landlock-abi-7") is False
    assert walls.record("b", False, "no Landlock") is True
    assert walls.record("b", False, "no Landlock") is False
    assert walls.unwalled(["a", "b", "c"]) == {"b": "no Landlock"}


def test_the_doctor_reads_what_a_wall_stops_from_how_the_helper_described_it() -> None:
    root = "landlock-abi-4,seccomp,no-new-privs,address-filter,pid-namespace,root-read-only"
    assert [c.kind for c in described_coverage(root) if not c.stopped] == ["device ioctls"]
    user = "landlock-abi-4,seccomp,no-new-privs,subreaper,tcp-6379"
    assert [c.kind for c in described_coverage(user) if not c.stopped] == [
        "signals", "tcp address", "device ioctls"
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("command", "reader"),
    [
        ("ss -tlnp", "ss"),
        ("ss -tln", None),
        ("ss --tcp --processes", "ss"),
        ("cat x | /usr/sbin/lsof -i :8000", "lsof"),
        ("netstat -tulpn", "netstat"),
        ("fuser -v /dev/nvidia0", "fuser"),
        ("grep lsof notes.txt", None),
        ("ss -tln; ps -p 1", None),
    ],
)
def test_readers_of_other_processes_details_are_found(command: str, reader: str | None) -> None:
    assert process_detail_reader(command) == reader


def test_everyday_reads_stay_unasked_with_daemons_and_process_details_outside_the_wall() -> None:
    """The wall closes daemon sockets and hides other processes: their reads run unasked only
    as exact shapes outside it. The everyday reads must still mostly run unasked (≥ 90 %)."""
    tool = SSHExec(cast(SSHPool, None), inventory_judge([]))
    data = Path(__file__).parent / "data" / "everyday_reads.txt"
    reads = [line for line in data.read_text().splitlines() if line and line[0] != "#"]
    kept = [r for r in reads if tool.risk(SSHExecInput(host="h", command=r)).risk == Risk.READ_ONLY]
    assert len(kept) / len(reads) >= 0.90
    assert "docker ps" in kept and "ss -tlnp" in kept and "lsof -i :8000" in kept


def test_reading_is_allowed_beneath_everything_but_device_mounts(tmp_path: Path) -> None:
    from tools.wall.host_landlock import readable_roots

    (tmp_path / "chroot" / "dev").mkdir(parents=True)
    (tmp_path / "chroot" / "etc").mkdir()
    (tmp_path / "logs").mkdir()
    closed = ["/dev", str(tmp_path / "chroot" / "dev")]
    roots = readable_roots(closed)
    assert "/etc" in roots and "/dev" not in roots
    assert str(tmp_path / "logs") in roots and str(tmp_path / "chroot" / "etc") in roots
    assert not any(
        root in closed or any(c.startswith(root + "/") for c in closed) for root in roots
    )


def test_every_channel_the_wall_closes_names_a_test_that_probes_it() -> None:
    root = Path(__file__).parents[2]
    for channel, mechanisms in MATRIX.items():
        if not mechanisms:
            assert channel not in PROBED_BY  # nothing closes it: nothing to probe
            continue
        path, _, test = PROBED_BY[channel].partition("::")
        assert f"def {test}(" in (root / path).read_text(), channel
