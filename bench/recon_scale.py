"""Recon at fleet scale: the seed's head plus N−1 copies of its worker, all through the head.

For each N the simulator runs in its own process (`python -m sim seed-pair --size N`); this
process opens a cold SSH pool, probes every host in one round, builds the world model and renders
what the model reads. Printed per N: recon wall time (median of --reps), the simulator's CPU
seconds per host per probe pack, the model-facing text and the `--json` size, hosts that failed.
Last line: `recon scale text N=32/N=2: X.XX, wall N=64/N=2: Y.YY` (goals: X ≤ 2.0, Y ≤ 3.0).

    .venv/bin/python bench/recon_scale.py [--sizes 2,8,32,64] [--reps 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agent.world.model import WorldModel  # noqa: E402
from agent.world.render import render_compact  # noqa: E402
from tools.recon.probe import probe_hosts  # noqa: E402
from tools.ssh import Inventory, SSHPool  # noqa: E402

READY_LINE = "Press Ctrl-C to stop."
START_TIMEOUT_S = 120.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Measure:
    size: int
    wall_s: float
    sim_cpu_per_host_s: float
    text_bytes: int
    json_bytes: int
    failed: int


def _cpu_s(pid: int) -> float:
    """CPU of a process and its reaped children (utime, stime, cutime, cstime)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(x) for x in fields[11:15]) / CLOCK_TICKS


def _tree_cpu_s(pid: int) -> float:
    """CPU of the simulator and of its live children (the hosts' tool servers)."""
    total = _cpu_s(pid)
    for task in Path(f"/proc/{pid}/task").iterdir():
        with open(task / "children") as children:
            total += sum(_cpu_s(int(child)) for child in children.read().split())
    return total


class SimProcess:
    """`python -m sim SCENARIO --size N` in its own process, stopped with SIGINT."""

    def __init__(self, scenario: str, size: int, folder: Path) -> None:
        self.inventory = folder / "inventory.yaml"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sim", scenario, "--size", str(size), "--dir", str(folder)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip() == READY_LINE:
                return
            if time.monotonic() > deadline:
                break
        self.stop()
        raise RuntimeError(f"the simulator did not start for {scenario} --size {size}")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def recon_once(inventory: Inventory) -> tuple[float, WorldModel]:
    started = time.monotonic()
    async with SSHPool(inventory) as pool:
        probe_round = await probe_hosts(pool, inventory.names())
    world = WorldModel()
    world.apply_round(probe_round.facts, probe_round.failures)
    render_compact(world)
    return time.monotonic() - started, world


def measure(size: int, reps: int) -> Measure:
    with tempfile.TemporaryDirectory(prefix="scout-recon-scale-") as folder:
        sim = SimProcess("seed-pair", size, Path(folder))
        try:
            inventory = Inventory.load(sim.inventory)
            asyncio.run(recon_once(inventory))  # warm: every tool server has imported its tools
            walls, cpus = [], []
            for _ in range(reps):
                before = _tree_cpu_s(sim.proc.pid)
                wall, world = asyncio.run(recon_once(inventory))
                cpus.append((_tree_cpu_s(sim.proc.pid) - before) / size)
                walls.append(wall)
        finally:
            sim.stop()
    return Measure(
        size=size,
        wall_s=statistics.median(walls),
        sim_cpu_per_host_s=statistics.median(cpus),
        text_bytes=len(render_compact(world).encode()),
        json_bytes=len(world.model_dump_json(indent=2).encode()),
        failed=len(world.unreachable),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2,8,32,64")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    sizes = sorted({int(s) for s in args.sizes.split(",")} | {2})
    results = {}
    print(f"{'N':>4} {'wall s':>8} {'sim CPU-s/host':>15} {'text B':>8} {'JSON KB':>8} failed")
    for size in sizes:
        m = measure(size, args.reps)
        results[size] = m
        print(
            f"{size:>4} {m.wall_s:>8.2f} {m.sim_cpu_per_host_s:>15.3f} {m.text_bytes:>8} "
            f"{m.json_bytes / 1024:>8.1f} {m.failed:>6}",
            flush=True,
        )
    base = results[2]
    text = results[32].text_bytes / base.text_bytes if 32 in results else float("nan")
    wall = results[64].wall_s / base.wall_s if 64 in results else float("nan")
    print(f"recon scale text N=32/N=2: {text:.2f}, wall N=64/N=2: {wall:.2f}")


if __name__ == "__main__":
    main()
