"""The wall alone, on this machine's real kernel, over real OpenSSH in network namespaces.

A test-only classifier calls every command read-only (injected through the builder, as no
product flag could), so nothing but the wall stands between these commands and the host: what
they try must fail inside it, and the same commands must work without it (or the test could
not fail). The login user is root, so root's powers are what the wall must take away.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from agent.faces.exec_one import exec_one
from agent.runtime.settings import Settings
from tests.support.sshd_topology import Topology
from tools.recon.probe import probe_hosts
from tools.risk.assessment import Risk, RiskAssessment
from tools.ssh import Inventory, SSHPool
from tools.world.facts import HostFacts

pytestmark = pytest.mark.system


def everything_reads(
    command: str, *, env: Mapping[str, str] | None = None, cwd: str | None = None
) -> RiskAssessment:
    """The worst classifier: whatever it is shown only reads."""
    return RiskAssessment(Risk.READ_ONLY, "the test's classifier calls everything read-only")


@pytest.fixture
def settings(sshd_topology: Topology, tmp_path: Path) -> Settings:
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(json.dumps(sshd_topology.inventory_data()))
    return Settings(
        inventory=inventory, mode="ci", transcripts_dir=tmp_path / "t", log_file=tmp_path / "log"
    )


async def run(settings: Settings, command: str, capsys: pytest.CaptureFixture[str]) -> str:
    status = await exec_one(settings, "head", command, judge=everything_reads)
    out = capsys.readouterr().out
    assert "verdict: read_only" in out and "ran inside the wall" in out
    return f"exit {status}\n{out}"


async def test_files_outside_the_scratch_folder_cannot_change(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = tmp_path / "kept.txt"
    kept.write_text("original\n")
    new, moved = tmp_path / "new.txt", tmp_path / "moved.txt"
    for command in (
        f"echo changed > {kept}",
        f"echo more >> {kept}",
        f"truncate -s 0 {kept}",
        f"rm -f {kept}",
        f"mv {kept} {moved}",
        f"chmod 000 {kept}",
        f"touch -d 2001-01-01 {kept}",
        f"touch {new}",
        f"mkdir {new}",
        f"ln -s {kept} {new}",
        f'python3 -c \'open("{new}", "w")\'',
    ):
        shown = await run(settings, command, capsys)
        assert not shown.startswith("exit 0"), (command, shown)
    assert kept.read_text() == "original\n" and oct(kept.stat().st_mode)[-3:] != "000"
    assert kept.stat().st_mtime > 1e9 + 3e8  # not re-timed to 2001
    assert not new.exists() and not new.is_symlink() and not moved.exists()
    scratch = await run(settings, 'echo mine > "$TMPDIR/s" && cat "$TMPDIR/s"', capsys)
    assert scratch.startswith("exit 0") and "mine" in scratch


@pytest.fixture
def listener(sshd_topology: Topology) -> Iterator[tuple[str, int]]:
    """A TCP listener on the root namespace's side of the head's link (another address)."""
    address = re.sub(r"\.2$", ".1", sshd_topology.head.address)
    server = socket.create_server((address, 0))
    try:
        yield address, server.getsockname()[1]
    finally:
        server.close()


async def test_no_connection_to_a_listener_on_another_address(
    settings: Settings, listener: tuple[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    address, port = listener
    connect = f"python3 -c 'import socket; socket.create_connection((\"{address}\", {port}), 5)'"
    walled = await run(settings, connect, capsys)
    assert not walled.startswith("exit 0") and "Permission denied" in walled
    bash = await run(settings, f"bash -c 'echo > /dev/tcp/{address}/{port}'", capsys)
    assert not bash.startswith("exit 0")
    async with SSHPool(Inventory.load(settings.inventory)) as pool:  # the same, unwalled
        result = await pool.run("head", connect, timeout=30)
    assert result.ok, result.stderr


def _link_mtu(topology: Topology) -> str:
    shown = subprocess.run(
        ["ip", "-n", topology.head.namespace, "-j", "link", "show", "lo"],
        capture_output=True, text=True, check=True, timeout=30,
    )  # fmt: skip
    return str(json.loads(shown.stdout)[0]["mtu"])


def _forwarding(topology: Topology) -> str:
    shown = subprocess.run(
        ["ip", "netns", "exec", topology.head.namespace, "sysctl", "-n", "net.ipv4.ip_forward"],
        capture_output=True, text=True, check=True, timeout=30,
    )  # fmt: skip
    return shown.stdout.strip()


@pytest.mark.parametrize("sudo", ["", "sudo -n "])
async def test_root_cannot_change_a_link_or_a_sysctl(
    sudo: str, settings: Settings, sshd_topology: Topology, capsys: pytest.CaptureFixture[str]
) -> None:
    if sudo and shutil.which("sudo") is None:
        pytest.skip("sudo is not installed here (apt-get install sudo)")
    mtu, forwarding = _link_mtu(sshd_topology), _forwarding(sshd_topology)
    flipped = "0" if forwarding == "1" else "1"
    link = await run(settings, f"{sudo}ip link set lo mtu 1280", capsys)
    assert not link.startswith("exit 0") and "Operation not permitted" in link
    knob = await run(settings, f"{sudo}sysctl -w net.ipv4.ip_forward={flipped}", capsys)
    assert not knob.startswith("exit 0")
    module = await run(settings, f"{sudo}modprobe -r dummy", capsys)
    assert not module.startswith("exit 0")
    assert (_link_mtu(sshd_topology), _forwarding(sshd_topology)) == (mtu, forwarding)
    powers = await run(settings, f"{sudo}grep CapBnd /proc/self/status", capsys)
    assert "0000000000000006" in powers  # DAC_OVERRIDE and DAC_READ_SEARCH only


def _read(facts: HostFacts) -> set[str]:
    """Every fact a probe read (the paths holding a value) and every problem it met, as words;
    values themselves change between two rounds (free memory, disk), what was read must not."""
    found: set[str] = set()

    def walk(value: object, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key not in ("collected_at", "sources"):
                    walk(item, f"{path}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{path}[{index}]")
        elif value is not None:
            found.add(f"{path}={value}" if path.endswith("problem") else path)

    walk(json.loads(facts.model_dump_json(exclude={"wall", "collected_at"})), "")
    return found


async def test_the_probe_pack_reads_the_same_facts_inside_the_wall(
    sshd_topology: Topology,
) -> None:
    inventory = Inventory.from_dict(sshd_topology.inventory_data())
    async with SSHPool(inventory) as pool:
        walled = await probe_hosts(pool, ["head", "worker"])
        bare = await probe_hosts(pool, ["head", "worker"], wall=False)
    assert walled.failures == bare.failures == {}
    for host in ("head", "worker"):
        wall = walled.facts[host].wall
        assert wall.inside and wall.landlock_abi and wall.seccomp, wall
        assert "root-read-only" in (wall.detail or "")
        assert _read(walled.facts[host]) == _read(bare.facts[host])


async def test_a_read_the_wall_refused_says_it_could_not_read(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    """dmesg needs CAP_SYSLOG where dmesg_restrict=1; inside the wall it is refused and
    `grep -ci xid` prints 0. The user reads that it could not read, not the 0."""
    if Path("/proc/sys/kernel/dmesg_restrict").read_text().strip() != "1":
        pytest.skip("the kernel log is open to everyone here (dmesg_restrict=0)")
    shown = await run(settings, "dmesg -T | grep -ci xid", capsys)
    assert not shown.startswith("exit 0")
    assert "could not read inside the wall: dmesg: read kernel buffer failed" in shown
    shown = await run(settings, "cat /proc/1/environ | wc -c", capsys)
    assert "could not read inside the wall:" in shown and "Permission denied" in shown


async def test_scout_exec_walled_runs_a_change_inside_the_wall_and_names_what_it_stopped(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The operator chose the wall: no classifier, no question (ci mode asks no one), and the
    command's changes fail, each named as the kernel reported it."""
    target = tmp_path / "made-by-script"
    script = f"cat /proc/loadavg; echo x > {target}; ip link set lo mtu 1280"
    status = await exec_one(settings, "head", script, walled_only=True)
    out = " ".join(capsys.readouterr().out.split())  # as read, whatever the terminal's width
    assert "verdict: read_only" in out and "ran inside the wall" in out
    assert re.search(r"could not read inside the wall: sh: \d+: cannot create \S+made-by", out)
    assert "stopped by the wall: RTNETLINK answers: Operation not permitted" in out
    assert status != 0 and not target.exists()
    assert await exec_one(settings, "head", script) == 3  # without --walled: ci denies it


async def test_a_repository_config_runs_no_program_in_a_walled_git_read(
    settings: Settings, sshd_topology: Topology, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An untrusted repository's .git/config can make `git status` run a program (fsmonitor);
    inside the wall git runs with that config overridden."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed here")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    hook = "echo FSMONITOR-RAN >&2; false"
    subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", hook], check=True)
    walled = await run(settings, f"git -C {repo} status", capsys)
    assert walled.startswith("exit 0") and "FSMONITOR-RAN" not in walled
    async with SSHPool(Inventory.load(settings.inventory)) as pool:  # the same, unwalled
        bare = await pool.run("head", f"git -C {repo} status", timeout=30)
    assert "FSMONITOR-RAN" in bare.stderr
