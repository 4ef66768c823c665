"""Start-up benchmark: `scout --help`, recon of a host that is down, recon of one host vs its floor.

Runs the installed `scout` entry point (or `python -m agent.faces.cli`) several times and reports
the median wall time of `--help` (goal: under 0.5 s); `scout recon` of one unreachable host (a
loopback port nothing listens on), as it runs and with the anthropic SDK imported first, as a
ratio: what recon would pay for importing a model client it never uses. Last, `scout recon` of
one live host against its floor, one `ssh host true` plus the slowest probe section
(bench/recon_floor.py: OpenSSH sshd where it can run, else the simulator), medians of --reps
runs interleaved with the floor's, the machine's load average beside them, and recon split
into the ssh connect, its probe pack on the host (its own command line sent by `ssh`) and
Scout's process. Every Python it starts runs from bytecode caches, as an installed Scout does
(bytecode_caches). Last line: `recon of one host / floor: R` (goal: R <= 1.5).

    .venv/bin/python bench/startup.py [--reps 9] [--sshd PATH | --sim]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
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
        subprocess.run(with_sdk, capture_output=True, env=env)  # write the bytecode caches
        return median_s(plain, reps, env=env), median_s(with_sdk, reps, env=env)


@contextlib.contextmanager
def bytecode_caches() -> Iterator[None]:
    """Every Python this bench starts reads and writes bytecode caches, in a folder of its own.

    An installed Scout runs from caches (pip compiles a wheel's modules as it installs them; an
    editable or uv install writes them on the first run), so timing its start-up while
    PYTHONDONTWRITEBYTECODE is set (as in some development shells) would time compiling each
    of Scout's modules from source on every run, a cost no user pays. The caches go under a
    temporary PYTHONPYCACHEPREFIX, leaving the checkout as it was; each measurement warms them
    with a run it does not time.
    """
    with tempfile.TemporaryDirectory(prefix="scout-bench-pycache-") as folder:
        saved = {name: os.environ.get(name) for name in ("PYTHONDONTWRITEBYTECODE",
                                                         "PYTHONPYCACHEPREFIX")}  # fmt: skip
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = folder
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def _load(averages: tuple[float, float, float]) -> str:
    return " ".join(f"{value:.2f}" for value in averages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--sshd", help="an sshd binary for the live host (default /usr/sbin/sshd)")
    parser.add_argument("--sim", action="store_true", help="the simulator's head even with sshd")
    args = parser.parse_args()
    with bytecode_caches():
        measure_all(args)


def measure_all(args: argparse.Namespace) -> None:
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
    load_before = os.getloadavg()
    with target(args.sshd, sim=args.sim) as found:
        recon_s, floor = measure(found, max(3, args.reps))
    load_after = os.getloadavg()
    print(f"live host: {found.kind}")
    print(f"load average (1, 5, 15 min): before {_load(load_before)}, after {_load(load_after)}")
    print(
        f"recon of one host: {recon_s:.2f} s; floor {floor.total_s:.2f} s = ssh true "
        f"{floor.ssh_true_s:.2f} s + slowest section ({floor.slowest}) {floor.slowest_s:.2f} s"
    )
    print(
        f"of recon: ssh true {floor.ssh_true_s:.2f} s + its probe pack on the host "
        f"{floor.pack_s:.2f} s + Scout's process here "
        f"{recon_s - floor.ssh_true_s - floor.pack_s:.2f} s"
    )
    print(f"recon of one host / floor: {recon_s / floor.total_s:.2f}")


if __name__ == "__main__":
    main()
