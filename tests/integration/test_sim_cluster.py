"""The simulated cluster over real SSH: formats, state changes, jump host, sandbox, faults."""

from __future__ import annotations

import asyncio
import gc
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import asyncssh
import pytest
import yaml

from sim.cluster import SimCluster
from tests.support.sim_client import client_options

FIXTURES = Path(__file__).parents[1] / "fixtures" / "recon"


def capture(name: str) -> list[str]:
    return (FIXTURES / name).read_text().splitlines()[1:]


@pytest.fixture
async def head(cluster: SimCluster) -> AsyncIterator[asyncssh.SSHClientConnection]:
    async with asyncssh.connect("127.0.0.1", cluster.head_port, **client_options(cluster)) as conn:
        yield conn


@pytest.fixture
async def worker(
    cluster: SimCluster, head: asyncssh.SSHClientConnection
) -> AsyncIterator[asyncssh.SSHClientConnection]:
    async with asyncssh.connect("192.168.200.13", 22, tunnel=head, **client_options(cluster)) as w:
        yield w


async def run(conn: asyncssh.SSHClientConnection, command: str) -> asyncssh.SSHCompletedProcess:
    return await conn.run(command, stdin=asyncssh.DEVNULL, timeout=30)


async def test_head_answers_recon_in_real_formats(head: asyncssh.SSHClientConnection) -> None:
    smi = (await run(head, "nvidia-smi")).stdout.splitlines()
    real = capture("spark_nvidia-smi_580.95.05.txt")
    assert smi[1:8] == real[1:8]
    assert "NVIDIA GB10" in smi[8] and "Not Supported" in smi[9]
    assert re.fullmatch(
        r"GPU 0: NVIDIA GB10 \(UUID: GPU-[0-9a-f-]+\)",
        (await run(head, "nvidia-smi -L")).stdout.strip(),
    )
    query = await run(
        head, "nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader"
    )
    assert query.stdout == "NVIDIA GB10, 580.95.05, [N/A]\n"
    free_h = (await run(head, "free -h")).stdout.splitlines()
    assert free_h[0] == capture("spark_free_h.txt")[0]
    free_b = (await run(head, "free -b")).stdout.splitlines()
    assert free_b[1].split()[1] == str(127600748 * 1024)
    meminfo = (await run(head, "cat /proc/meminfo")).stdout
    assert re.search(r"^MemTotal: +127600748 kB$", meminfo, re.M)
    grep = (await run(head, "grep -E 'MemTotal|MemAvailable|MemFree' /proc/meminfo")).stdout
    assert [line.split(":")[0] for line in grep.splitlines()] == [
        "MemTotal",
        "MemFree",
        "MemAvailable",
    ]
    release = (await run(head, "cat /etc/dgx-release")).stdout.splitlines()
    assert release[:2] == capture("spark_dgx-release.txt")[:2]
    assert 'DGX_OTA_VERSION="7.3.1"' in release


async def test_network_and_docker_formats(head: asyncssh.SSHClientConnection) -> None:
    ib = (await run(head, "ibdev2netdev")).stdout.splitlines()
    assert all(re.fullmatch(r"\S+ port \d+ ==> \S+ \((Up|Down)\)", line) for line in ib)
    assert ib == capture("spark_ibdev2netdev_p1_up.txt")
    rdma = (await run(head, "rdma link show")).stdout.split()
    real = " ".join(capture("spark_rdma_link_show.txt")).split()
    assert rdma == real
    brief = (await run(head, "ip -br addr")).stdout.splitlines()
    assert brief[0] == capture("spark_ip_br_addr_linklocal.txt")[0]
    assert brief[3].startswith("enp1s0f1np1      UP             192.168.100.10/24 ")
    ps = [
        json.loads(line)
        for line in (await run(head, "docker ps --format json")).stdout.splitlines()
    ]
    real_keys = json.loads(capture("generic_docker_ps_format_json.txt")[0]).keys()
    assert [p["Names"] for p in ps] == ["vllm_node"] and ps[0].keys() == real_keys
    assert ps[0]["Status"] == "Up 7 weeks" and ps[0]["Image"] == "vllm-node"


async def test_stopping_the_old_container_frees_its_memory(
    cluster: SimCluster, head: asyncssh.SSHClientConnection
) -> None:
    def available() -> int:
        return int(re.search(r"MemAvailable: +(\d+)", meminfo).group(1))

    meminfo = (await run(head, "cat /proc/meminfo")).stdout
    before = available()
    refused = await run(head, "docker rm vllm_node")
    assert refused.exit_status == 1 and "container is running" in refused.stderr
    assert (await run(head, "docker stop vllm_node")).stdout == "vllm_node\n"
    meminfo = (await run(head, "grep MemAvailable /proc/meminfo")).stdout
    assert available() - before == 95703125
    assert (await run(head, "docker ps -q")).stdout == ""
    assert "Exited (0)" in (await run(head, "docker ps -a")).stdout
    assert (await run(head, "docker rm vllm_node")).exit_status == 0
    assert cluster.host_state("spark-a")["docker"]["containers"] == {}


async def test_run_of_an_image_that_is_not_local_fails_to_pull(
    head: asyncssh.SSHClientConnection,
) -> None:
    result = await run(head, "docker run -d --name x nvcr.io/nvidia/vllm:26.06-py3")
    assert result.exit_status == 125
    assert "Unable to find image 'nvcr.io/nvidia/vllm:26.06-py3' locally" in result.stderr
    started = await run(head, "docker run -d --rm --name y nvcr.io/nvidia/vllm:25.11-py3 sleep 1")
    assert started.exit_status == 0 and re.fullmatch(r"[0-9a-f]{64}\n", started.stdout)


async def test_worker_only_through_the_head(
    cluster: SimCluster, head: asyncssh.SSHClientConnection, worker: asyncssh.SSHClientConnection
) -> None:
    assert (await run(worker, "hostname")).stdout == "spark-b4ec\n"
    rdma = (await run(worker, "rdma link show rocep1s0f1/1")).stdout
    assert "state DOWN physical_state DISABLED" in rdma
    assert "(Down)" in (await run(worker, "ibdev2netdev | grep enp1s0f1np1")).stdout
    assert (await run(worker, "sudo ip link set enp1s0f1np1 up")).exit_status == 0
    assert "(Up)" in (await run(worker, "ibdev2netdev | grep enp1s0f1np1")).stdout
    assert cluster.host_state("spark-b")["nics"]["enp1s0f1np1"]["up"] is True
    with pytest.raises(asyncssh.ChannelOpenError, match="not one of them"):
        await asyncssh.connect("10.1.2.3", 22, tunnel=head, **client_options(cluster))


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("rm -rf x", "rm: command not found"),
        ("echo hi > /tmp/f", "restricted: cannot redirect output"),
        ("/bin/rm -rf x", "restricted: cannot specify `/' in command names"),
        ("cd /", "cd: restricted"),
        ("sed -i s/a/b/ x", "in-place editing (-i) is not allowed"),
        ("python3 -c 'import os'", "runs no other Python code"),
        ("env rm x", "env: command not found"),
        ("exec /bin/sh", "exec: restricted"),
        ("command -p rm x", "command: -p: restricted"),
        ("timeout 5 /bin/rm x", "command names with '/' are not allowed"),
        ("sort -o x /etc/os-release", "writing files (-o) is not allowed"),
        ("kill -9 1", "kill: command not found"),
        ("cat /etc/passwd", "No such file or directory"),
    ],
)
async def test_sandbox_refuses_escapes(
    cluster: SimCluster,
    head: asyncssh.SSHClientConnection,
    tmp_path: Path,
    command: str,
    message: str,
) -> None:
    outside = tmp_path / "x"
    outside.write_text("keep")
    result = await run(head, command.replace(" x", f" {outside}"))
    assert result.exit_status != 0
    assert message in result.stderr
    assert outside.read_text() == "keep"
    assert not Path("/tmp/f").exists() or "hi" not in Path("/tmp/f").read_text()


async def test_timeout_wrapper_and_discarded_stderr_work(
    head: asyncssh.SSHClientConnection,
) -> None:
    result = await run(
        head,
        "timeout --kill-after=5s 30s sh -c 'nvcc --version 2>/dev/null "
        "|| echo nvcc-missing; uname -m'",
    )
    assert result.stdout == "nvcc-missing\naarch64\n" and result.exit_status == 0


async def test_hanging_command_is_killed_by_the_remote_timeout(
    cluster: SimCluster, head: asyncssh.SSHClientConnection
) -> None:
    cluster.inject("spark-a", hang="nvidia-smi")
    result = await run(head, "timeout --kill-after=1s 1s sh -c 'nvidia-smi'")
    assert result.exit_status == 124
    cluster.inject("spark-a", hang=None)
    assert (await run(head, "nvidia-smi -L")).exit_status == 0


async def test_dropped_connection_mid_command(
    cluster: SimCluster, head: asyncssh.SSHClientConnection
) -> None:
    cluster.inject("spark-a", drop="docker ps")
    cut = await run(head, "docker ps")
    assert cut.exit_status is None and cut.exit_signal is None
    with pytest.raises(asyncssh.ChannelOpenError, match="connection closed"):
        await run(head, "hostname")


async def test_head_down_closes_connections(
    cluster: SimCluster, head: asyncssh.SSHClientConnection
) -> None:
    cluster.inject("spark-a", down=True)
    with pytest.raises((asyncssh.Error, OSError)):
        await asyncssh.connect("127.0.0.1", cluster.head_port, **client_options(cluster))
    cluster.inject("spark-a", down=False)
    async with asyncssh.connect("127.0.0.1", cluster.head_port, **client_options(cluster)) as conn:
        assert (await run(conn, "hostname")).stdout == "spark-7d19\n"


async def test_worker_down_is_refused_by_the_head_with_a_reason(
    cluster: SimCluster, head: asyncssh.SSHClientConnection
) -> None:
    cluster.inject("spark-b", down=True, latency_s=0.01)
    with pytest.raises(asyncssh.ChannelOpenError, match="No route to host"):
        await asyncssh.connect("192.168.200.13", 22, tunnel=head, **client_options(cluster))


async def test_inventory_describes_the_jump_host(cluster: SimCluster) -> None:
    path = cluster.write_inventory(cluster.root_dir / "inv" / "inventory.yaml")
    inventory = yaml.safe_load(path.read_text())
    assert inventory["hosts"]["spark-a"] == {
        "address": "127.0.0.1",
        "port": cluster.head_port,
        "roles": ["head"],
        "labels": {"simulator": cluster.scenario.name},  # so a session knows it is simulated
    }
    assert inventory["hosts"]["spark-b"] == {
        "address": "192.168.200.13",
        "port": 22,
        "jump": "spark-a",
        "roles": ["worker"],
        "labels": {"simulator": cluster.scenario.name},
    }
    known = Path(inventory["known_hosts"]).read_text().splitlines()
    assert known[0].startswith(f"[127.0.0.1]:{cluster.head_port} ssh-ed25519 ")
    assert known[1].startswith("192.168.200.13 ssh-ed25519 ")


async def test_an_eleventh_session_on_one_connection_is_refused_like_openssh(
    head: asyncssh.SSHClientConnection,
) -> None:
    held = [await head.create_process("sleep 30", stdin=asyncssh.DEVNULL) for _ in range(10)]
    try:
        with pytest.raises(asyncssh.ChannelOpenError, match="open failed"):
            await head.create_process("hostname", stdin=asyncssh.DEVNULL)
    finally:
        for process in held:
            process.close()
        for process in held:
            await process.wait_closed()
    assert (await run(head, "hostname")).stdout == "spark-7d19\n"


@pytest.mark.slow
async def test_a_channel_closed_mid_output_ends_the_command_quietly(
    head: asyncssh.SSHClientConnection,
) -> None:
    """The client closes a session while its command still prints (an interrupt): the server
    stops forwarding, as sshd does, and leaves no failed task behind."""
    failures: list[dict] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: failures.append(context))
    for _ in range(5):
        process = await head.create_process("seq 1 100000000", stdin=asyncssh.DEVNULL)
        await process.stdout.read(4096)
        process.close()
        await process.wait_closed()
    await asyncio.sleep(1.0)
    gc.collect()  # an exception nobody retrieved is reported when its task is collected
    await asyncio.sleep(0)
    assert [c.get("exception") for c in failures] == []
