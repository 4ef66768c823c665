"""Start-up benchmark: how long `scout --help` takes as a fresh process (heavy imports deferred).

Runs the installed `scout` entry point (or `python -m agent.faces.cli`) several times and reports
the median wall time. Last line: `startup scout --help: X.XX s` (goal: under 0.5 s).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def command() -> list[str]:
    beside = Path(sys.executable).with_name("scout")
    if beside.exists():
        return [str(beside), "--help"]
    found = shutil.which("scout")
    return [found, "--help"] if found else [sys.executable, "-m", "agent.faces.cli", "--help"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args()
    cmd = command()
    subprocess.run(cmd, check=True, capture_output=True)  # warm the file cache once
    times = []
    for _ in range(args.reps):
        started = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    baseline = []
    for _ in range(args.reps):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        baseline.append(time.perf_counter() - started)
    print(f"command: {' '.join(cmd)}")
    print(f"bare python start-up: {statistics.median(baseline):.3f} s")
    print(f"startup scout --help: {statistics.median(times):.2f} s")


if __name__ == "__main__":
    main()
