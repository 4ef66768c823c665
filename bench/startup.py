"""Start-up benchmark: `scout --help`, recon of a host that is down, recon of one host vs its floor.

Runs the installed `scout` entry point (or `python -m agent.faces.cli`) several times and reports
the median wall time of `--help` (goal: under 0.5 s); `scout recon` of one unreachable host (a
loopback port nothing listens on), as it runs and with the anthropic SDK imported first, as a
ratio: what recon would pay for importing a model client it never uses. Last, `scout recon` of
one live host against its floor, one `ssh host true` plus the slowest probe section
(bench/recon_floor.py: OpenSSH sshd where it can run, else the simulator). Last line:
`recon of one host / floor: R` (goal: R <= 1.5).

    .venv/bin/python bench/startup.py [--reps 9] [--sshd PATH | --sim]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.recon_floor import measure, target

# `scout ARGV…` in one process, optionally after importing the SDK (argv[1] says which).
RECON = """
import sys
if sys.argv[1] == "sdk":
    import anthropic
from agent.faces.cli import main
sys.exit(main(sys.argv[2:]))
"""


def command() -> list[str]:
    beside = Path(sys.executable).with_name("scout")
    if beside.exists():
        return [str(beside), "--help"]
    found = shutil.which("scout")
    return [found, "--help"] if found else [sys.executable, "-m", "agent.faces.cli", "--help"]


def median_s(cmd: Sequence[str], reps: int, **kwargs: object) -> float:
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        subprocess.run(cmd, capture_output=True, **kwargs)  # type: ignore[call-overload]
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def recon_unreachable(reps: int) -> tuple[float, float]:
    """Median wall time of `scout recon` of one unreachable host: as it runs, and with the SDK."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryDirectory() as folder:
        inventory = Path(folder) / "inventory.yaml"
        inventory.write_text(f"hosts:\n  a: {{address: 127.0.0.1, port: {port}}}\n")
        env = {**os.environ, "SCOUT_HOME": folder}
        env.pop("SCOUT_SETTINGS", None)
        argv = ["recon", "--inventory", str(inventory)]
        plain = [sys.executable, "-c", RECON, "plain", *argv]
        with_sdk = [sys.executable, "-c", RECON, "sdk", *argv]
        return median_s(plain, reps, env=env), median_s(with_sdk, reps, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--sshd", help="an sshd binary for the live host (default /usr/sbin/sshd)")
    parser.add_argument("--sim", action="store_true", help="the simulator's head even with sshd")
    args = parser.parse_args()
    cmd = command()
    subprocess.run(cmd, check=True, capture_output=True)  # warm the file cache once
    without_sdk, with_sdk = recon_unreachable(max(3, args.reps // 3))
    print(
        f"recon of one unreachable host: {without_sdk:.2f} s, {with_sdk:.2f} s with the SDK "
        f"imported; with/without: {with_sdk / without_sdk:.2f}"
    )
    help_s = median_s(cmd, args.reps, check=True)
    bare_s = median_s([sys.executable, "-c", "pass"], args.reps, check=True)
    print(f"command: {' '.join(cmd)}")
    print(f"bare python start-up: {bare_s:.3f} s")
    print(f"startup scout --help: {help_s:.2f} s")
    with target(args.sshd, sim=args.sim) as found:
        recon_s, floor = measure(found, max(3, args.reps // 2))
    print(f"live host: {found.kind}")
    print(
        f"recon of one host: {recon_s:.2f} s; floor {floor.total_s:.2f} s = ssh true "
        f"{floor.ssh_true_s:.2f} s + slowest section ({floor.slowest}) {floor.slowest_s:.2f} s"
    )
    print(f"recon of one host / floor: {recon_s / floor.total_s:.2f}")


if __name__ == "__main__":
    main()
