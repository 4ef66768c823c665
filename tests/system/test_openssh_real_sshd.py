"""`scout recon` over OpenSSH's own client (tools/recon/openssh.py) against real sshd: the same
facts as the pool's probe, without importing asyncssh; host keys as strict as the pool's (a
changed key refused even with --trust-new-hosts, an unknown one refused unless trusted, and
trusted once recorded); a host behind a jump host still probed, through the pool. The line
`ssh` runs comes on its stdin (tools/recon/ssh_client.py): whole, however long, and none of it
read by the commands, which see stdin at its end as under `ssh -n`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.support.sshd_topology import Topology
from tools.recon.probe import probe_hosts
from tools.recon.ssh_client import start_ssh
from tools.ssh import Inventory, SSHPool

pytestmark = pytest.mark.system

# `scout recon …`, then one stderr line saying whether the process imported asyncssh
RECON = (
    "import sys\nfrom agent.faces.cli import main\ncode = main(sys.argv[1:])\n"
    "print('asyncssh loaded:', 'asyncssh' in sys.modules, file=sys.stderr)\nsys.exit(code)\n"
)


@dataclass(frozen=True)
class Recon:
    code: int
    stdout: str
    stderr: str

    @property
    def used_asyncssh(self) -> bool:
        (line,) = [x for x in self.stderr.splitlines() if x.startswith("asyncssh loaded:")]
        return line.endswith("True")


def recon(inventory: Path, home: Path, *argv: str) -> Recon:
    env = {**os.environ, "SCOUT_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("SCOUT_SETTINGS", None)
    done = subprocess.run(
        [sys.executable, "-c", RECON, "recon", "--inventory", str(inventory), *argv],
        capture_output=True, text=True, timeout=180, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return Recon(done.returncode, done.stdout, done.stderr)


def write_inventory(topology: Topology, folder: Path, known_hosts: Path) -> Path:
    data = {**topology.inventory_data(), "known_hosts": str(known_hosts)}
    path = folder / "inventory.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def other_host_key(folder: Path, address: str) -> str:
    """A known_hosts line for `address` with a key the host does not have."""
    key = folder / "other_host_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key], check=True)
    return f"{address} {' '.join(key.with_suffix('.pub').read_text().split()[:2])}\n"


def untimed(value: object) -> object:
    """`value` without its `collected_at` stamps (the two probes ran at different times)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k != "collected_at"}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


async def test_a_direct_host_gives_the_pools_facts_without_asyncssh(
    sshd_topology: Topology, tmp_path: Path
) -> None:
    inventory = write_inventory(sshd_topology, tmp_path, sshd_topology.known_hosts)
    done = recon(inventory, tmp_path / "home", "--hosts", "head", "--json")
    assert done.code == 0, done.stderr
    assert not done.used_asyncssh
    seen = json.loads(done.stdout)["hosts"]["head"]
    async with SSHPool(Inventory.load(inventory)) as pool:
        pooled = json.loads((await probe_hosts(pool, ["head"])).facts["head"].model_dump_json())
    for part in ("identity", "os", "wall", "gpu"):
        assert untimed(seen[part]) == untimed(pooled[part]), part
    assert seen["cpu"]["cpu_count"] == pooled["cpu"]["cpu_count"]


def test_a_changed_host_key_is_refused_even_when_new_keys_are_trusted(
    sshd_topology: Topology, tmp_path: Path
) -> None:
    known_hosts = tmp_path / "known_hosts"
    recorded = other_host_key(tmp_path, sshd_topology.head.address)
    known_hosts.write_text(recorded)
    inventory = write_inventory(sshd_topology, tmp_path, known_hosts)
    for trust in ([], ["--trust-new-hosts"]):
        done = recon(inventory, tmp_path / "home", "--hosts", "head", *trust)
        assert done.code == 1
        assert "scout recon: head unreachable: HOST KEY CHANGED for head" in done.stderr
        assert "head: reads run" not in done.stdout  # no facts from that host
    assert known_hosts.read_text() == recorded  # nothing was written to the file


def test_an_unknown_host_is_refused_until_trusted_then_reached_by_openssh(
    sshd_topology: Topology, tmp_path: Path
) -> None:
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text("")
    inventory = write_inventory(sshd_topology, tmp_path, known_hosts)
    home = tmp_path / "home"
    refused = recon(inventory, home, "--hosts", "head")
    assert refused.code == 1
    assert "scout recon: head unreachable: unknown host key for head" in refused.stderr
    assert known_hosts.read_text() == ""
    trusted = recon(inventory, home, "--hosts", "head", "--trust-new-hosts")
    assert trusted.code == 0, trusted.stderr
    assert "trusted new host key for head: SHA256:" in trusted.stderr
    assert known_hosts.read_text().startswith(f"{sshd_topology.head.address} ssh-ed25519 ")
    again = recon(inventory, home, "--hosts", "head")
    assert again.code == 0, again.stderr
    assert not again.used_asyncssh  # the recorded key is OpenSSH's to check now


def test_a_host_behind_a_jump_host_is_probed_through_the_pool(
    sshd_topology: Topology, tmp_path: Path
) -> None:
    inventory = write_inventory(sshd_topology, tmp_path, sshd_topology.known_hosts)
    done = recon(inventory, tmp_path / "home", "--hosts", "head,worker", "--json")
    assert done.code == 0, done.stderr
    assert done.used_asyncssh
    hosts = json.loads(done.stdout)["hosts"]
    assert list(hosts) == ["head", "worker"]  # in the order asked, whoever answered first
    assert hosts["worker"]["identity"]["hostname"] == "worker"


def test_the_line_sent_on_stdin_runs_whole_and_is_not_the_commands_input(
    sshd_topology: Topology, tmp_path: Path
) -> None:
    inventory = Inventory.load(write_inventory(sshd_topology, tmp_path, sshd_topology.known_hosts))
    # longer than one argument may be (MAX_ARG_STRLEN, 128 KiB) and than a pipe holds (64 KiB)
    filler = ": " + "x" * 300_000
    run = start_ssh(inventory.get("head"), inventory.known_hosts_path)
    assert run is not None
    run.send(f'echo "stdin gave: $(cat | wc -c)"\n{filler}\necho ran in "$0"')
    assert run.wait(60) == 0, run.stderr.text()
    said = run.stdout.text().splitlines()
    assert said[0] == "stdin gave: 0"  # the line is the shell's alone, as under `ssh -n`
    assert said[1].startswith("ran in ") and "sh" in said[1]  # the login shell ran it
