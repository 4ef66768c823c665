"""`scout recon` of one host against its floor, measured side by side on the same host.

The floor is what any tool must pay to probe that host: one `ssh host true` (OpenSSH's client:
connect, key exchange, login, one command) plus the slowest probe section run alone over ssh,
less the ssh it rode on. Recon runs every section, so it can do no better than connect once and
wait for its slowest section; everything above that is Scout's own (start-up, imports, the
wall, parsing, printing).

The host is OpenSSH's sshd on 127.0.0.1 (bench/ssh_fanout.py's farm; needs root) where it is
installed, or else the simulated seed pair's head (`python -m sim`), whose tools answer as a
DGX Spark's do, `docker stats` taking its two seconds among them.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench.ssh_fanout import SSHD, SshdFarm
from tools.recon.openssh import probe_line
from tools.recon.probe import WALL_COMMAND
from tools.recon.sections import SECTIONS

# `scout recon` as the installed entry point runs it: a fresh interpreter, settings, logging
SCOUT = [sys.executable, "-m", "agent.faces.cli"]


@dataclass(frozen=True)
class Target:
    """One host to probe: how OpenSSH's ssh reaches it, and a Scout inventory naming it."""

    kind: str
    ssh: list[str]  # `ssh … user@host`, a command to follow
    inventory: Path
    host: str


@dataclass(frozen=True)
class Floor:
    ssh_true_s: float
    slowest: str
    slowest_s: float  # the section alone, less the ssh it rode on
    # recon's own command line sent by `ssh` (its whole probe pack, walled part and all), less
    # the ssh it rode on: what the host spends on recon, apart from Scout's process here
    pack_s: float

    @property
    def total_s(self) -> float:
        return self.ssh_true_s + self.slowest_s


def _ssh(port: int, key: Path, known_hosts: Path, user: str) -> list[str]:
    return [
        "ssh", "-F", "/dev/null", "-p", str(port), "-i", str(key),
        "-o", f"UserKnownHostsFile={known_hosts}", "-o", "StrictHostKeyChecking=yes",
        "-o", "BatchMode=yes", f"{user}@127.0.0.1",
    ]  # fmt: skip


@contextlib.contextmanager
def sshd_target(root: Path, sshd: str) -> Iterator[Target]:
    farm = SshdFarm(root, 1, sshd=sshd)
    try:
        user = getpass.getuser()
        inventory = root / "inventory.yaml"
        inventory.write_text(
            yaml.safe_dump(
                {
                    "known_hosts": str(farm.known_hosts),
                    "defaults": {"user": user, "identity_file": str(farm.key)},
                    "hosts": {"h0": {"address": "127.0.0.1", "port": farm.ports[0]}},
                }
            )
        )
        ssh = _ssh(farm.ports[0], farm.key, farm.known_hosts, user)
        yield Target(f"OpenSSH sshd ({sshd})", ssh, inventory, "h0")
    finally:
        farm.stop()


@contextlib.contextmanager
def sim_target(root: Path) -> Iterator[Target]:
    """The seed pair's head, served by `python -m sim` until the block ends."""
    serving = subprocess.Popen(
        [sys.executable, "-m", "sim", "seed-pair", "--dir", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert serving.stdout is not None
        for line in serving.stdout:
            if line.startswith("Press Ctrl-C"):
                break
        else:
            raise RuntimeError("the simulator did not start (python -m sim seed-pair)")
        inventory = root / "inventory.yaml"
        loaded = yaml.safe_load(inventory.read_text())
        head = next(name for name, h in loaded["hosts"].items() if "jump" not in h)
        ssh = _ssh(
            loaded["hosts"][head]["port"],
            root / "id_ed25519",
            root / "known_hosts",
            loaded["defaults"]["user"],
        )
        yield Target("the simulated seed pair's head (python -m sim)", ssh, inventory, head)
    finally:
        serving.send_signal(signal.SIGINT)
        try:
            serving.wait(timeout=30)
        except subprocess.TimeoutExpired:
            serving.kill()


@contextlib.contextmanager
def target(sshd: str | None, *, sim: bool = False) -> Iterator[Target]:
    """Real sshd where it can run here (root, installed or named), else (or with `sim`) the
    simulator."""
    with tempfile.TemporaryDirectory(prefix="scout-bench-floor-") as tmp:
        chosen = sshd or SSHD
        if not sim and os.geteuid() == 0 and Path(chosen).exists():
            with sshd_target(Path(tmp), chosen) as found:
                yield found
        else:
            with sim_target(Path(tmp)) as found:
                yield found


def wall_s(cmd: Sequence[str], **kwargs: object) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, capture_output=True, stdin=subprocess.DEVNULL, **kwargs)  # type: ignore[call-overload]
    return time.perf_counter() - started


def measure(found: Target, reps: int) -> tuple[float, Floor]:
    """Median recon and the floor, their runs interleaved so that load falls on both alike."""
    with tempfile.TemporaryDirectory(prefix="scout-bench-home-") as home:
        env = {**os.environ, "SCOUT_HOME": home, "NO_COLOR": "1"}
        env.pop("SCOUT_SETTINGS", None)
        recon = [*SCOUT, "recon", "--inventory", str(found.inventory), "--hosts", found.host]
        if subprocess.run(recon, capture_output=True, env=env).returncode != 0:
            raise RuntimeError(f"scout recon of {found.kind} failed")
        sections = [*SECTIONS, ("wall", WALL_COMMAND)]
        recon_s: list[float] = []
        true_s: list[float] = []
        pack_s: list[float] = []
        section_s: dict[str, list[float]] = {name: [] for name, _ in sections}
        for _ in range(reps):
            recon_s.append(wall_s(recon, env=env))
            true_s.append(wall_s([*found.ssh, "true"]))
            pack_s.append(wall_s([*found.ssh, probe_line()]))
            for name, command in sections:
                section_s[name].append(wall_s([*found.ssh, command]))
    ssh_true = statistics.median(true_s)
    slowest, slowest_s = max(
        ((name, statistics.median(times)) for name, times in section_s.items()),
        key=lambda item: item[1],
    )
    return statistics.median(recon_s), Floor(
        ssh_true,
        slowest,
        max(0.0, slowest_s - ssh_true),
        max(0.0, statistics.median(pack_s) - ssh_true),
    )
